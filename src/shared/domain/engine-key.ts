// D1: one engine per (operator, game, currency).
export type EngineKey = { operatorId: string; gameCode: string; currency: string };

export const engineKeyOf = (row: EngineKey): EngineKey => ({
  operatorId: row.operatorId,
  gameCode: row.gameCode,
  currency: row.currency,
});
