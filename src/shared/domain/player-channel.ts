import type { BetRejectReason, CashOutRefusal } from './bet-rules.js';
import type { RoundState as RoundStatus } from './state-machine.js';
import type { ProfileView } from './jurisdictions.js';

// The player channel's messages, both ways (contract 4.4, 6.3; D4, D28, D33): the one map
// that the game layer's emitter, the realtime role's handlers and the page (through JSDoc,
// src/realtime/page/tsconfig.json) are checked against. Types only: what travels is JSON,
// so every amount is a MicroAmount string (D18), never a number.

// dice.ts's Side, spelled here: the page's check reads this module and no Node types
type Side = 'LOW' | 'HIGH';

// ---- service -> player ------------------------------------------------------------------

// D4: every message the service sends carries ts (ISO 8601), stamped by the emitter
export type Stamped<T> = T & { ts: string };

// contract 3.1 phases of an engine's cycle, as round_state shows them
export type RoundPhase = 'PENDING' | 'BETTING_OPEN' | 'ROLLING' | 'RESULT' | 'COOLDOWN' | 'FINISHED';

// D40: a crash cycle's ROLLING is its flight: flightStartedAt (ISO, ms) is the instant every
// flight of the cycle started, serverTime the service's clock when the message left, so that
// the page draws the curve m(t) itself (the service sends no tick stream). phaseEndsAt is then
// the latest the flight can last (t(maxMultiplier)); it ends sooner once every round of the
// cycle is resolved. flightStartedAt is null while the crash points are being stored.
export type RoundState = { cycleId: string; phase: RoundPhase; phaseEndsAt: string | null; flightStartedAt?: string | null; serverTime?: string };

// D4 `connected` (the product adds mode, lang and returnUrl): balanceMicro null when the
// wallet's balance is not known (D24), roundState null before the engine's first cycle
export type Connected = {
  sessionId: string;
  serverSeedHash: string | null;
  clientSeed: string | null;
  nonce: number;
  balanceMicro: string | null;
  currency: string;
  // D46: a stake is a multiple of stakeStepMicro
  // D39: the session's game
  gameCode?: string;
  // dice: payoutMultiplier and commissionMicro; crash: maxMultiplier and maxPayoutMicro (D40)
  config: {
    minBetMicro: string;
    maxBetMicro: string;
    stakeStepMicro: string;
    payoutMultiplier?: string;
    commissionMicro: string;
    maxMultiplier?: string;
    maxPayoutMicro?: string;
    // D41, an instant game: the least time between two plays, and what buying the feature
    // costs in stakes (absent where it may not be bought)
    minRoundMs?: number;
    featureBuyCost?: string;
  };
  // contract 3.1; always null for an instant game (D41: no shared clock)
  roundState: RoundState | null;
  // D41: the jackpot's pool of the session's operator and currency, for a game with one
  jackpot?: Jackpot;
  mode: 'demo' | 'real';
  lang: string;
  returnUrl: string | null;
  // D42: the session's usable free-bet grants ([] for a demo session)
  freeBets: FreeBet[];
  // D44: the jurisdiction profile the session plays under, and where the player stands
  jurisdiction?: JurisdictionView;
};

// D44: the rules of the session's profile as a page shows and obeys them (maxStakeMicro: the
// bound in the session's currency, null for none; realityCheckMinutes null for none)
export type JurisdictionRules = ProfileView['rules'];

// D44: where the player stands: how long they have played (ms), their net position (wins less
// stakes, micro-units, signed) since then, and the ms until the next reality check (0 or less:
// due now, bets refused until reality_check_ack; null: the profile has none). Counted at the
// message's ts.
export type PlayerPosition = { elapsedMs: number; netPositionMicro: string; realityCheckInMs: number | null };

// code: the session's jurisdiction claim; profile: the profile applied (`default` for a code
// without one)
export type JurisdictionView = ProfileView & PlayerPosition;

// D42: a free-bet grant the session may spend now: its campaign's stake, the rounds it has
// left, and when it expires (ISO)
// featureBuy: a grant of bought features (an instant game's campaign, D42), played with `play`
export type FreeBet = { grantId: string; campaignRef: string; stakeMicro: string; remaining: number; expiresAt: string; featureBuy?: true };

// D42: the session's usable grants, sent after each change of them
export type FreeBets = { freeBets: FreeBet[] };

// dice: side; crash: autoCashOut ("2.00", or null without one)
// D41: an instant play's featureBuy (its amountMicro is then what the feature cost)
export type BetPlaced = { betId: string; roundId: string; cycleId: string; side?: Side; autoCashOut?: string | null; featureBuy?: boolean; amountMicro: string; isFree: boolean };

// contract 6.4: currency absent (or null) only when neither the wallet's answer nor the
// session's record named it
export type BalanceUpdate = { balanceMicro: string; currency?: string | null };

// the refusals of any player message, before it is handled (D4, D28): a message over the
// socket's budget, a paused intake, a token or session no longer valid
export type ChannelRefusal = 'rate_limited' | 'service_unavailable' | 'invalid_token' | 'session_terminated' | 'session_expired';

export type BetRejected = { reason: BetRejectReason | ChannelRefusal; clientBetId?: string };

// D4, D19: payoutMicro is net ("0" on a loss); the weights let the player recompute the side
export type RoundResult = {
  roundId: string;
  cycleId: string;
  nonce: number;
  side: Side;
  sum: number;
  diceValues: number[];
  betId: string;
  won: boolean;
  payoutMicro: string;
  lowWeight: string;
  highWeight: string;
};

// D40: a crash round's result, when it is resolved: at its cash-out (by hand or automatic;
// the crash point is then revealed to its player) or at its crash. Multipliers with two
// decimals ("2.37"); cashOutMultiplier null when lost; payoutMicro "0" when lost.
export type CrashRoundResult = {
  roundId: string;
  cycleId: string;
  nonce: number;
  betId: string;
  crashMultiplier: string;
  cashOutMultiplier: string | null;
  won: boolean;
  payoutMicro: string;
};

// D41: an instant play's result, sent as soon as its outcome is durable: what it debited
// (costMicro: the stake, or featureBuyCost x the stake), the base spin as drawn (null for a
// bought feature), every event in order with what it paid (line wins, the feature's trigger,
// each free spin, the jackpot), and its contribution to the jackpot's pool. Amounts as decimal
// strings (D18); payoutMicro is the events' sum as booked ("0" when nothing was won).
export type MultiEvent = { type: string; subOutcome?: unknown; payoutMicro: string };
export type MultiRoundResult = {
  roundId: string;
  cycleId: string;
  nonce: number;
  betId: string;
  won: boolean;
  payoutMicro: string;
  featurePurchased: boolean;
  costMicro: string;
  baseGame: unknown;
  events: MultiEvent[];
  jackpotContributionMicro: string;
};

// D41: the jackpot's pool of the session's operator and currency, as it stands; sent on
// connect, after a hit (hit: what the hit paid and its round) and at most once a second while
// plays feed it
export type Jackpot = { currency: string; poolMicro: string; hit?: { roundId: string; payoutMicro: string } };

export type RoundVoided = { roundId: string; cycleId: string; reason: string };

export type SeedRotated = { serverSeedHash: string; clientSeed: string; nonce: number };

// D28: the retired seed (serverSeed) comes with every end but `replaced`, which carries the hash only
export type SessionEnded = { reason: string; serverSeedHash?: string; serverSeed?: string };

// D23: a win that failed after round_result went out
export type WinFailed = { roundId?: string; betId: string; reason: string };

// D12: the node is shutting down; the client reconnects with the same token
export type ServiceRestarting = { reconnect: true };

// what each service -> player message carries, without ts
export type ServerMessages = {
  connected: Connected;
  round_state: RoundState;
  bet_placed: BetPlaced;
  balance_update: BalanceUpdate;
  bet_rejected: BetRejected;
  round_result: RoundResult | CrashRoundResult | MultiRoundResult;
  round_voided: RoundVoided;
  seed_rotated: SeedRotated;
  session_ended: SessionEnded;
  win_failed: WinFailed;
  service_restarting: ServiceRestarting;
  free_bets: FreeBets;
  jackpot: Jackpot;
};

export type ServerEvent = keyof ServerMessages;

// socket.io's ServerToClientEvents: each message as it arrives, with ts
export type ServerToClientEvents = { [E in ServerEvent]: (message: Stamped<ServerMessages[E]>) => void };

// ---- player -> service ------------------------------------------------------------------

// D4: amountMicro an integer or a MicroAmount string (src/realtime/messages.ts validates it);
// dice: side; crash: an optional autoCashOut, a multiplier with two decimals (D40). D42: a free
// bet names freeBetGrantId instead of amountMicro (exactly one of the two)
export type PlaceBet = { side?: Side; autoCashOut?: string; amountMicro?: number | string; freeBetGrantId?: string; clientBetId?: string };

// D41: an instant play: its stake (amountMicro, as place_bet's), and whether it buys the
// feature (featureBuy: it then debits featureBuyCost x the stake). Its ack is the debit's
// verdict, as place_bet's; round_result follows with the outcome. D42: a free play names
// freeBetGrantId instead of amountMicro (exactly one of the two); its stake and feature buy are
// its campaign's.
export type Play = { amountMicro?: number | string; featureBuy?: boolean; freeBetGrantId?: string; clientBetId?: string };

// D40: a cash-out of the session's bet in the flight; its ack is the decision, durable before
// it is sent
export type CashOut = { clientBetId?: string };
export type CashOutAck = { ok: true; cashOutMultiplier: string; payoutMicro: string } | { ok: false; reason: CashOutRefusal } | ChannelRefused;

// a bet's verdict as its ack carries it (contract 8.2, D4); a verdict may be reached on
// another node and travel to the one holding the ack (the emitter's verdict())
export type BetVerdict = { ok: true; betId: string; roundId: string } | { ok: false; reason: BetRejectReason };

export type ChannelRefused = { ok: false; reason: ChannelRefusal };

export type PlaceBetAck = BetVerdict | ChannelRefused;

export type RotateSeed = { clientSeed?: string };

// D5: a rotation reveals the retired seed and commits to the new one
export type SeedRotation = {
  ok: true;
  previousServerSeed: string;
  previousServerSeedHash: string;
  previousClientSeed: string;
  lastNonce: number | null;
  serverSeedHash: string;
  clientSeed: string;
};

export type RotateSeedAck = SeedRotation | { ok: false; reason: 'bet_in_progress' | 'session_not_found' | 'invalid_payload' } | ChannelRefused;

// D33: one of the session's last rounds, with the balances the wallet answered (the same
// record the recall page shows, src/shared/game/reports/recall.ts)
// why a balance is not shown: the session is a demo (D8: no wallet); the round is still in
// play; the win or rollback is not confirmed yet (retried, contract 3.4); the wallet never
// gave a readable answer (a timeout, an uncertain answer); its answer carried no balanceMicro
export type BalanceGap = 'demo' | 'in_play' | 'pending' | 'no_answer' | 'not_reported';
export type RecalledBalance = { micro: string; gap: null } | { micro: null; gap: BalanceGap };

export type RecalledRound = {
  roundId: string;
  cycleId: string;
  gameCode: string;
  currency: string;
  playerRef: string;
  // when the bet was placed, and when the round settled or was voided
  placedAt: string;
  finishedAt: string | null;
  // the round's state (contract 3.1); a roundId that never became a round reads VOIDED (D22)
  state: RoundStatus;
  voidReason: string | null;
  // D22: why the wallet refused the bet (its 8.2 reason); null otherwise
  rejectReason: string | null;
  // dice: the side bet on; null for crash (D40)
  side: string | null;
  // contract 8.4, D42: a free bet's amountMicro is its campaign's stake, which was not debited;
  // bonusRef is its campaignRef (the debit's bonusRef, contract 2.6), null for a paid bet
  amountMicro: string;
  isFree: boolean;
  bonusRef: string | null;
  // dice: the die; null for crash, whose outcome is its crash point (below)
  outcome: { side: string; face: number } | null;
  // crash only (D40): the bet's auto cash-out, the crash point (once the round's result is
  // known), the cash-out's multiplier and the ms of the flight it was decided at (null when
  // lost), as the reconciliation reads show them; multipliers with two decimals ("2.37")
  autoCashOut?: string | null;
  crashMultiplier?: string | null;
  cashOutMultiplier?: string | null;
  cashOutMs?: number | null;
  // Gem Vault only (D41): whether the play bought the feature (amountMicro is then its cost), and
  // the play as its proof shows it once its outcome is stored, null before
  featureBuy?: boolean;
  featurePurchased?: boolean | null;
  baseGame?: unknown;
  events?: MultiEvent[] | null;
  jackpotContributionMicro?: string | null;
  // D44: the jurisdiction profile the bet was placed under
  jurisdiction: ProfileView;
  // known with the outcome (contract 3.1 RESULT), before the round settles
  won: boolean | null;
  // the net payout (contract 8.4): "0" for a lost round; null while in play (a won round's
  // until it settles) or when voided
  payoutMicro: string | null;
  balanceBefore: RecalledBalance;
  balanceAfter: RecalledBalance;
  // what an in-page check needs (contract 2.11): the seed once it is retired (D2, D5)
  proof: {
    serverSeedHash: string;
    clientSeed: string;
    nonce: number;
    lowWeight: string;
    highWeight: string;
    // crash: the edge its crash point was derived with (D40)
    commissionMicro?: string;
    serverSeed: string | null;
    revealableAfter: string | null;
  } | null;
};

// D33 recent_rounds takes nothing: no payload, or an empty object
export type RecentRounds = Record<string, never>;
export type RecentRoundsAck = { ok: true; rounds: RecalledRound[] } | { ok: false; reason: 'invalid_payload' } | ChannelRefused;

// D44 session_position and reality_check_ack take nothing: no payload, or an empty object
export type PositionRequest = Record<string, never>;
export type PositionAck = ({ ok: true } & PlayerPosition) | { ok: false; reason: 'invalid_payload' | 'session_not_found' } | ChannelRefused;

// what each player -> service message carries and what its ack answers
export type ClientMessages = {
  place_bet: { payload: PlaceBet; ack: PlaceBetAck };
  rotate_seed: { payload: RotateSeed; ack: RotateSeedAck };
  recent_rounds: { payload: RecentRounds; ack: RecentRoundsAck };
  cash_out: { payload: CashOut; ack: CashOutAck };
  play: { payload: Play; ack: PlaceBetAck };
  session_position: { payload: PositionRequest; ack: PositionAck };
  reality_check_ack: { payload: PositionRequest; ack: PositionAck };
};

export type ClientEvent = keyof ClientMessages;

// socket.io's ClientToServerEvents: every player message is sent with an acknowledgement
export type ClientToServerEvents = {
  [E in ClientEvent]: (payload: ClientMessages[E]['payload'], ack: (answer: ClientMessages[E]['ack']) => void) => void;
};
