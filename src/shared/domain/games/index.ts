import { crashModule } from './crash.js';
import { diceModule } from './dice.js';
import { gemsModule } from './gems.js';
import type { AnyGameModule } from './types.js';

// The games of this service (D39): one line per game module. Adding a game is its module and
// its line here.
//
// A module may exist before the service can play it: its math is written and tested, its
// engine, settlement and page are not. Whether a game may be launched is the registry's flag,
// `launchable`, beside its line, not a property of the module: the module is the game's math
// and stays the same when the service learns to run it.
//
// D39: dice is available to every operator with its defaults (as before there was a
// catalogue); any other game only to an operator with a configuration for it, per currency
// (`rgs game config --game CODE`): `everyOperator` says which.
const GAMES = [
  { module: diceModule, launchable: true, everyOperator: true },
  { module: crashModule, launchable: true, everyOperator: false },
  { module: gemsModule, launchable: true, everyOperator: false },
] as const satisfies readonly { module: AnyGameModule; launchable: boolean; everyOperator: boolean }[];

export type GameCode = (typeof GAMES)[number]['module']['gameCode'];
type LaunchableEntry = Extract<(typeof GAMES)[number], { launchable: true }>;
export type LaunchableGameCode = LaunchableEntry['module']['gameCode'];

// every game with a module, launchable or not
export const GAME_MODULES: readonly AnyGameModule[] = GAMES.map((entry) => entry.module);
export const GAME_CODES: readonly GameCode[] = GAMES.map((entry) => entry.module.gameCode);
export const LAUNCHABLE_GAME_CODES: readonly LaunchableGameCode[] = GAMES.filter((entry): entry is LaunchableEntry => entry.launchable).map(
  (entry) => entry.module.gameCode,
);

// the module of a game code, launchable or not; undefined for a code no module has
export function gameModule(code: string): AnyGameModule | undefined {
  return GAME_MODULES.find((module) => module.gameCode === code);
}

// Whether a session may be launched for the code: what the launch, the launch page and `rgs
// game config` ask. A game with a module that is not launchable yet is not known to them.
export const isKnownGame = (code: string): code is LaunchableGameCode => (LAUNCHABLE_GAME_CODES as readonly string[]).includes(code);

// D39: whether every operator may launch the game without a configuration of its own
export const availableToEveryOperator = (code: string): boolean => GAMES.some((entry) => entry.module.gameCode === code && entry.everyOperator);
