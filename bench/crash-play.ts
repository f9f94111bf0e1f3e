import { curveCents, curveTime } from '../src/shared/domain/games/crash-curve.js';
import { centsOf, centsText } from '../src/shared/domain/games/crash.js';

// How a bench player plays crash (D40, `--game crash`): it bets as a dice player does, and
// aims to cash out at a multiplier of its own each round. Every fourth player asks the service
// for it (autoCashOut); the others cash out by hand: each reads its clock from the ROLLING
// round_state (flightStartedAt and serverTime, as a page without a clock of its own must) and
// sends cash_out when that clock says the curve has reached its target. A player whose round
// has crashed (its round_result came first) does not send one.

// the lowest target and, by default, the highest: a flight lasts until its players' rounds have
// ended, so the highest target sets the cycle's length (2.00x is 11.6 s into the flight)
export const CASH_OUT_MIN_CENTS = 105;
export const DEFAULT_CASH_OUT_MAX_CENTS = 200;
// a smoke run's flights are short (1.30x is 4.4 s into the flight)
export const SMOKE_CASH_OUT_MAX_CENTS = 130;
const CASH_OUT_MAX_LIMIT_CENTS = 1000;
export const CASH_OUT_MAX_BOUNDS = `${centsWords(CASH_OUT_MIN_CENTS + 1)} to ${centsWords(CASH_OUT_MAX_LIMIT_CENTS)}`;

// one player in this many cashes out automatically, the rest by hand
const AUTO_CASH_OUT_EVERY = 4;

export function centsWords(cents: number): string {
  return centsText(BigInt(cents));
}

// --cash-out-max: a multiplier with two decimals above the lowest target, at most 10.00
export function parseCashOutMax(text: string): number | undefined {
  const cents = centsOf(text);
  if (cents === undefined || cents <= BigInt(CASH_OUT_MIN_CENTS) || cents > BigInt(CASH_OUT_MAX_LIMIT_CENTS)) return undefined;
  return Number(cents);
}

// a crash engine's cycle when every round lasts until the highest target: the betting window,
// the flight, the cooldown
export const crashCycleMs = (bettingWindowMs: number, cooldownMs: number, maxCents: number): number =>
  bettingWindowMs + curveTime(BigInt(maxCents)) + cooldownMs;

// Players are dealt to the operators in turn (sessions.ts): an operator's players are counted
// by their place among its own, so that every operator has some of each kind (its second
// player cashes out automatically, then every fourth).
export const cashesOutAutomatically = (playerIndex: number, operators: number): boolean =>
  Math.floor(playerIndex / operators) % AUTO_CASH_OUT_EVERY === 1;

// A target drawn uniformly over the flight's time between the lowest and the highest target,
// as a value of the curve: cash-outs spread evenly over the flight, more of them at low
// multipliers, where the curve climbs slowly.
export function drawTargetCents(random: number, maxCents: number): number {
  const from = curveTime(BigInt(CASH_OUT_MIN_CENTS));
  const to = curveTime(BigInt(maxCents));
  return Number(curveCents(from + Math.floor(random * (to - from + 1))));
}

// The player's clock of a flight, from the ROLLING round_state that announced it: the
// service's clock is taken to be serverTime when the message arrived (the page has no better
// estimate: the message's transit is unknown to it), so the player's clock runs behind the
// service's by the round_state's delivery.
export class FlightClock {
  private readonly offsetMs: number;
  readonly startedAt: number;

  constructor(state: { flightStartedAt: string; serverTime: string }, receivedAt: number) {
    this.startedAt = Date.parse(state.flightStartedAt);
    this.offsetMs = Date.parse(state.serverTime) - receivedAt;
  }

  // ms into the flight at this machine's time `at`, by the player's clock
  flightMs(at: number): number {
    return at + this.offsetMs - this.startedAt;
  }

  // this machine's time at which the player's clock reads `flightMs`
  localAt(flightMs: number): number {
    return this.startedAt + flightMs - this.offsetMs;
  }

  // the multiplier the player's clock shows at `at`, in cents
  centsAt(at: number): number {
    return Number(curveCents(Math.max(0, Math.floor(this.flightMs(at)))));
  }
}

// the first ms of the flight at which the curve shows `cents`
export const curveTimeOf = (cents: number): number => curveTime(BigInt(cents));
