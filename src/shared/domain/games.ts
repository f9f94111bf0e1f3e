// The games this service runs. Contract 1: the dice game is the one shown in full.
export const GAME_CODES = ['dice'] as const;
export type GameCode = (typeof GAME_CODES)[number];
export const isKnownGame = (code: string): code is GameCode => (GAME_CODES as readonly string[]).includes(code);
