// How a bench player plays Gem Vault (D41, `--game gems`): an instant game with no shared
// clock, so each player keeps its own pace. Its first play falls at random in the first
// --bet-spread of minRoundMs after betting starts (the same spread of the players' moments a
// dice run has over its betting window), and every later one as soon as the service allows it:
//
// - one round at a time (D41): not before the previous play's round_result, nor, for a win,
//   before the win's balance_update, since the play's bet stays in play until the wallet has
//   credited the win (a play sent sooner is refused already_bet_this_round);
// - minRoundMs between two plays, on the service's clock (D41): the service stamps a play when
//   it places it, which is before its ack leaves, on this machine's clock; a play sent
//   minRoundMs after the previous one's ack, by that same wall clock, can never be too soon,
//   whatever either play's transit was.
//
// So a player plays about once every minRoundMs plus an ack: the most often the rules let a
// client play, never refused for playing too soon. Each play stakes the bench's stake, as a
// dice or crash bet does; a --feature-buy-share of them buy the feature (D41: the play then
// debits featureBuyCost times the stake).

// D41's default, which the bench's operators are configured with unless --min-round says
export const DEFAULT_MIN_ROUND_MS = 1000;

// a play waits this long at most for its round_result or its win's balance_update before the
// player goes on (the analysis counts the missing result or win); the bet ack's own limit
export const GEMS_STALL_MS = 20_000;

// --feature-buy-share: a decimal from 0 to 1
export function parseFeatureBuyShare(text: string): number | undefined {
  if (!/^(0(\.[0-9]+)?|1(\.0+)?|\.[0-9]+)$/.test(text)) return undefined;
  return Number(text);
}

// What a player's pace needs of its last play: when its ack came on the wall clock (the
// service's clock, one machine: Date.now, not the bench's sub-millisecond epochMs, whose
// origin may differ from it by a fraction of a millisecond), whether it was accepted, and
// whether its round_result and, for a win, its credit have been told.
export type GemsPace = {
  ackWallMs?: number;
  accepted?: boolean;
  roundId?: string;
  resulted: boolean;
  won: boolean;
  // the balance_update count the player must have seen: one per accepted play's debit, one
  // per won play's credit (contract 6.4), whatever order they arrive in
  balanceUpdatesDue: number;
  sentWallMs: number;
};

// The wall-clock time from which the next play may be sent, or undefined while the previous
// play is still in play (its ack, its result, or its win's credit not yet told): the player
// then waits for that message, up to GEMS_STALL_MS.
export function nextPlayAt(last: GemsPace | undefined, balanceUpdatesSeen: number, minRoundMs: number): number | undefined {
  if (!last) return 0;
  if (last.ackWallMs === undefined) return undefined;
  // a refused play moved no money and started no round: the next waits minRoundMs from its
  // ack all the same, as a client would
  if (!last.accepted) return last.ackWallMs + minRoundMs;
  if (!last.resulted) return undefined;
  if (last.won && balanceUpdatesSeen < last.balanceUpdatesDue) return undefined;
  return last.ackWallMs + minRoundMs;
}
