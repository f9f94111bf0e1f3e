import type { RgLimit } from './events.js';
import type { RsStatus } from './wallet-status.js';

// The bet rules of contract 8.2 and the responsible-gambling checks of 8.3 / D14, pure.

export type BetRejectReason =
  | 'bet_out_of_range'
  | 'session_not_found'
  | 'session_terminated'
  | 'session_expired'
  | 'phase_not_open'
  | 'already_bet_this_round'
  // D41: an instant play less than minRoundMs after the session's previous play; D44: any
  // game's bet less than its jurisdiction profile's minRoundMs after the session's previous bet
  | 'round_too_soon'
  // D44: bets wait for the player's acknowledgement of a reality check
  | 'reality_check_due'
  // D44: the bet debits more than the jurisdiction profile allows in the session's currency
  | 'stake_above_jurisdiction_max'
  | 'rg_limit_reached'
  // D42: the free-bet grant named cannot be spent by this bet
  | 'free_bet_unavailable'
  | 'wallet_timeout'
  | `wallet_rejected:${RsStatus}`
  | 'invalid_payload'
  // D28, not 8.2 codes: Postgres or Redis is away, or the node is shutting down (retry
  // shortly), or the operator has no valid wallet credential (no call could be made)
  | 'service_unavailable'
  // D37: the node is past its load bound and refused the bet before placing it
  | 'service_busy'
  // the socket is over its message budget (throttle.ts)
  | 'rate_limited';

// The reasons of bet_rejected and of a refused place_bet ack (contract 8.2, D13, D28): what
// each means and what the player's client should do. docs/errors.md is generated from it.
type ReasonKey = Exclude<BetRejectReason, `wallet_rejected:${string}`> | 'wallet_rejected:<RS_status>';

export const BET_REJECT_REASONS = {
  bet_out_of_range: {
    meaning: 'the stake is zero, below minBetMicro, above maxBetMicro (8.2 rule 3) or not a multiple of stakeStepMicro (D46)',
    action: 'bet an amount within the table limits, in steps of stakeStepMicro',
  },
  session_not_found: { meaning: 'the session no longer exists (8.2 rule 1)', action: 'launch a new session through the operator' },
  session_terminated: { meaning: 'the operator terminated the session (8.2 rule 1)', action: 'launch a new session through the operator' },
  session_expired: { meaning: 'the session token has expired (8.2 rule 1)', action: 'launch a new session through the operator' },
  phase_not_open: { meaning: 'the round is not in BETTING_OPEN (8.2 rule 2)', action: 'wait for the next round_state BETTING_OPEN' },
  already_bet_this_round: {
    meaning: 'the player already has a bet in this round (8.2 rule 4); for an instant game, the session\'s previous play is still in play, its win not yet confirmed (D41)',
    action: 'wait for the next round, or for the previous play\'s round_result',
  },
  round_too_soon: {
    meaning:
      "the bet came less than minRoundMs after the session's previous bet: an instant game's own minRoundMs (D41), or, for every game, the jurisdiction profile's (D44, connected.jurisdiction.rules); no wallet call was made",
    action: 'bet again once minRoundMs has passed since the previous bet',
  },
  reality_check_due: {
    meaning: 'a reality check of the session\'s jurisdiction profile is due: bets are refused until the player acknowledges it (D44); no wallet call was made',
    action: 'show the reality check (elapsed time, net position); on "continue" send reality_check_ack, then bet again',
  },
  stake_above_jurisdiction_max: {
    meaning: "the bet debits more than the jurisdiction profile's maxStakeMicro in the session's currency (D44; a bought feature debits its whole price); no wallet call was made",
    action: 'bet at most connected.jurisdiction.rules.maxStakeMicro',
  },
  rg_limit_reached: {
    meaning: 'a responsible-gambling limit of the session would be breached; no wallet call was made (8.3, D14)',
    action: 'no further bets until the limit allows them',
  },
  free_bet_unavailable: {
    meaning:
      "the free-bet grant named is not the session's to spend now: unknown, another player's, game's or currency's, its campaign cancelled or finished, outside its validity window, no round left, or a demo session; no wallet call was made (D42)",
    action: 'bet with amountMicro, or with a grant the latest connected or free_bets lists',
  },
  wallet_timeout: {
    meaning: 'the wallet did not answer the debit in time; a rollback of it is scheduled (8.1, D13)',
    action: 'if the stake was taken, the rollback returns it; bet again in a later round',
  },
  'wallet_rejected:<RS_status>': {
    meaning:
      'the operator wallet refused the debit with this status, or its answer was uncertain (RS_ERROR_UNKNOWN: an error, not JSON, an unknown status; RS_ERROR_TIMEOUT: the circuit is open) (8.2 rule 6, D13)',
    action: 'RS_ERROR_NOT_ENOUGH_MONEY, RS_ERROR_LIMIT_REACHED: a smaller stake or a top-up; an uncertain status: its stake is rolled back, bet again later',
  },
  invalid_payload: { meaning: 'the message failed validation (8.2, D24)', action: 'fix the message: side LOW or HIGH, amountMicro a whole number of micro-units without sign, decimals or leading zeros' },
  service_unavailable: {
    meaning: 'the service cannot take bets for the moment: a dependency is down, the node is shutting down, or the operator has no valid wallet credential (D28)',
    action: 'retry shortly',
  },
  service_busy: {
    meaning: 'the service is past its load bound for the moment and refused the bet at once, before placing it: no bet row, no wallet call (D37)',
    action: 'bet again in a later round',
  },
  rate_limited: { meaning: 'the connection is over its message budget (D28)', action: 'send fewer messages' },
} as const satisfies Record<ReasonKey, { meaning: string; action: string }>;

// 8.2 rule 1: the session is active (not terminated, not expired).
export function sessionRefusal(
  session: { state: 'ACTIVE' | 'TERMINATED' | 'EXPIRED'; expiresAt: Date } | null,
  now: Date,
): BetRejectReason | undefined {
  if (!session) return 'session_not_found';
  if (session.state === 'TERMINATED') return 'session_terminated';
  if (session.state === 'EXPIRED' || session.expiresAt <= now) return 'session_expired';
  return undefined;
}

// 8.2 rule 3: minBetMicro <= amount <= maxBetMicro; 0 is always refused; D46: the stake is a
// multiple of the game's stake step. Every game's stakes pass here, so a zero stake is
// bet_out_of_range whatever a game's bounds (D24).
export type StakeBounds = { minBetMicro: bigint; maxBetMicro: bigint; stakeStepMicro: bigint };

export function amountRefusal(amountMicro: bigint, bounds: StakeBounds): BetRejectReason | undefined {
  const { minBetMicro, maxBetMicro, stakeStepMicro } = bounds;
  return amountMicro <= 0n || amountMicro < minBetMicro || amountMicro > maxBetMicro || amountMicro % stakeStepMicro !== 0n
    ? 'bet_out_of_range'
    : undefined;
}

export type RgState = {
  dailyLossMicro: bigint | null;
  dailyWagerMicro: bigint | null;
  sessionTimeSeconds: number | null;
  sessionCreatedAt: Date;
  // D14: over the player's (operator, playerRef, currency) bets in the last 24 hours
  lostStakesMicro24h: bigint; // settled losing stakes plus accepted, unsettled stakes
  wageredMicro24h: bigint;
};

// 8.3: each limit the session carries must allow the extra stake; checked before any
// wallet call (D14). The first limit (in this order) that refuses it, if any.
export function rgLimitTripped(state: RgState, stakeMicro: bigint, now: Date): RgLimit | undefined {
  if (state.dailyLossMicro !== null && state.lostStakesMicro24h + stakeMicro > state.dailyLossMicro) return 'dailyLoss';
  if (state.dailyWagerMicro !== null && state.wageredMicro24h + stakeMicro > state.dailyWagerMicro) return 'dailyWager';
  if (state.sessionTimeSeconds !== null && now.getTime() - state.sessionCreatedAt.getTime() > state.sessionTimeSeconds * 1000) {
    return 'sessionTime';
  }
  return undefined;
}

export function rgRefusal(state: RgState, stakeMicro: bigint, now: Date): BetRejectReason | undefined {
  return rgLimitTripped(state, stakeMicro, now) ? 'rg_limit_reached' : undefined;
}

// D13: the bet_rejected reason for an uncertain debit.
export function uncertainReason(status: RsStatus, timedOut: boolean): BetRejectReason {
  return timedOut ? 'wallet_timeout' : `wallet_rejected:${status}`;
}

// D40: why a crash cash_out was not granted (its ack's reason); invalid_payload as for any
// message
export const CASH_OUT_REFUSALS = {
  too_late: { meaning: 'the round had ended by the arrival stamp: it crashed at or before that ms', action: 'nothing: the round is lost; its round_result names the crash point' },
  already_cashed_out: {
    meaning: 'the bet was cashed out already: by another cash_out of the session (another tab or device), or by its auto cash-out, reached at or before the arrival stamp',
    action: 'show the cash-out its round_result or the first ack reports',
  },
  no_active_bet: { meaning: 'the session has no bet in the current cycle, or its round was voided', action: 'bet in the next betting window' },
  not_flying: { meaning: "the cycle is not in its flight: betting is still open, or the flight has not started yet", action: 'send cash_out once round_state ROLLING carries flightStartedAt' },
  invalid_payload: { meaning: 'the message failed validation (D24): cash_out takes nothing, or a clientBetId', action: 'send cash_out with an empty object' },
} as const satisfies Record<string, { meaning: string; action: string }>;

export type CashOutRefusal = keyof typeof CASH_OUT_REFUSALS;
