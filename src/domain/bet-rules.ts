import type { RsStatus } from './wallet-status.js';

// The bet rules of contract 8.2 and the responsible-gambling checks of 8.3 / D14, pure.

export type BetRejectReason =
  | 'bet_out_of_range'
  | 'session_not_found'
  | 'session_terminated'
  | 'session_expired'
  | 'phase_not_open'
  | 'already_bet_this_round'
  | 'rg_limit_reached'
  | 'wallet_timeout'
  | `wallet_rejected:${RsStatus}`
  | 'invalid_payload'
  // D28, not 8.2 codes: Postgres or Redis is away, or the node is shutting down (retry
  // shortly), or the operator has no valid wallet credential (no call could be made)
  | 'service_unavailable'
  // the socket is over its message budget (throttle.ts)
  | 'rate_limited';

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

// 8.2 rule 3: minBetMicro <= amount <= maxBetMicro; 0 is always refused.
export function amountRefusal(amountMicro: bigint, minBetMicro: bigint, maxBetMicro: bigint): BetRejectReason | undefined {
  return amountMicro <= 0n || amountMicro < minBetMicro || amountMicro > maxBetMicro ? 'bet_out_of_range' : undefined;
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
// wallet call (D14).
export function rgRefusal(state: RgState, stakeMicro: bigint, now: Date): BetRejectReason | undefined {
  if (state.dailyLossMicro !== null && state.lostStakesMicro24h + stakeMicro > state.dailyLossMicro) return 'rg_limit_reached';
  if (state.dailyWagerMicro !== null && state.wageredMicro24h + stakeMicro > state.dailyWagerMicro) return 'rg_limit_reached';
  if (state.sessionTimeSeconds !== null && now.getTime() - state.sessionCreatedAt.getTime() > state.sessionTimeSeconds * 1000) {
    return 'rg_limit_reached';
  }
  return undefined;
}

// D13: the bet_rejected reason for an uncertain debit.
export function uncertainReason(status: RsStatus, timedOut: boolean): BetRejectReason {
  return timedOut ? 'wallet_timeout' : `wallet_rejected:${status}`;
}
