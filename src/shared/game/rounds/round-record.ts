import type { Bet, Round } from '../../platform/db/client.js';
import { gameModule } from '../../domain/games/index.js';
import type { AnyGameModule, RoundRecord } from '../../domain/games/types.js';

// A stored round as its game's module reads it (D39): the round's columns and its bet's own
// parameters, whatever the game. The reads of rounds (the proof, the dispute pack, the recall,
// the reconciliation views) build it here and ask the module.

export type RecordedRound = Pick<
  Round,
  'state' | 'outcomeSide' | 'outcomeSum' | 'diceValues' | 'lowWeight' | 'highWeight' | 'crashCents' | 'cashOutCents' | 'cashOutMs' | 'outcome'
>;

export const roundRecord = (round: RecordedRound, bet: Pick<Bet, 'side' | 'autoCashOutCents' | 'featureBuy'>): RoundRecord => ({
  state: round.state,
  side: bet.side,
  autoCashOutCents: bet.autoCashOutCents,
  outcomeSide: round.outcomeSide,
  outcomeSum: round.outcomeSum,
  diceValues: round.diceValues,
  lowWeight: round.lowWeight,
  highWeight: round.highWeight,
  crashCents: round.crashCents,
  cashOutCents: round.cashOutCents,
  cashOutMs: round.cashOutMs,
  outcome: round.outcome,
  featureBuy: bet.featureBuy,
});

// the module of a stored row's game (`of` names the row: `round <id>`, `cycle <id>`); a row of
// a game no module knows is a corrupt row: an error, never another game's (D39)
export function moduleOf(gameCode: string, of: string): AnyGameModule {
  const module = gameModule(gameCode);
  if (!module) throw new Error(`${of} is of an unknown game: ${gameCode}`);
  return module;
}

export const moduleOfRound = (gameCode: string, roundId: string): AnyGameModule => moduleOf(gameCode, `round ${roundId}`);
