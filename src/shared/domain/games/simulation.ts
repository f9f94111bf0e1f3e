import { reducedFraction, rtpText } from '../par-sheet.js';
import { roundHash } from '../seeds.js';
import type { ExactRtp, SimulationInput, SimulationResult } from './types.js';

// `rgs game simulate` (D39): N rounds played through a game's real derivation and settlement
// arithmetic, with no wallet and no database, and the measured return beside the exact one.
// The rounds are those of one session: the given server seed, a fixed client seed and the
// nonces 0 to N-1, each round's h by D2, so a run is repeated exactly from its seed. The
// measured return is a check of the module against its own par sheet; the par sheet itself
// is never taken from a simulation (D39).

export const SIMULATION_CLIENT_SEED = 'simulation';
// the two-sided 99% quantile of the normal distribution
export const Z_99 = 2.5758293035489004;

export type { SimulationInput, SimulationResult };

// n / d as a double, for statistics only (n, d >= 0, d > 0)
const ratio = (n: bigint, d: bigint): number => Number((n * 10n ** 18n) / d) / 1e18;

// what the loop asks of a game played on the shared clock (a module's derive, settle and rtp)
export type SimulatedGame<Config, Bet, Outcome> = {
  derive(h: Buffer, config: Config): Outcome;
  settle(stakeMicro: bigint, bet: Bet, outcome: Outcome, config: Config): { won: boolean; payoutMicro: bigint };
  rtp(config: Config, bet: Bet, stakeMicro?: bigint): ExactRtp;
};

export function simulate<Config, Bet, Outcome>(module: SimulatedGame<Config, Bet, Outcome>, input: SimulationInput<Config, Bet>): SimulationResult {
  const { config, bet, stakeMicro, rounds, serverSeed } = input;
  if (!Number.isSafeInteger(rounds) || rounds < 2) throw new RangeError(`rounds must be an integer, at least 2: ${rounds}`);
  if (stakeMicro <= 0n) throw new RangeError(`stake must be positive: ${stakeMicro}`);
  let wins = 0;
  let paid = 0n;
  let paidSquares = 0n;
  for (let nonce = 0; nonce < rounds; nonce++) {
    const outcome = module.derive(roundHash({ serverSeed, clientSeed: SIMULATION_CLIENT_SEED, nonce }), config);
    const { won, payoutMicro } = module.settle(stakeMicro, bet, outcome, config);
    if (won) wins++;
    paid += payoutMicro;
    paidSquares += payoutMicro * payoutMicro;
  }
  return simulationResult({ rounds, wins, paid, paidSquares, stakeMicro, exact: module.rtp(config, bet, stakeMicro) });
}

// The statistics of a run (its sums over the rounds), beside the exact return: every game's
// simulation reports them so (D39; the multi-event game's too, D41). stakeMicro is what each
// round debited.
export function simulationResult(input: { rounds: number; wins: number; paid: bigint; paidSquares: bigint; stakeMicro: bigint; exact: ExactRtp }): SimulationResult {
  const { rounds, wins, paid, paidSquares, stakeMicro, exact } = input;
  const n = BigInt(rounds);
  const staked = n * stakeMicro;
  // the sample variance of payout / stake: (n * sum p^2 - (sum p)^2) / (n (n - 1) stake^2)
  const variance = ratio(n * paidSquares - paid * paid, n * (n - 1n) * stakeMicro * stakeMicro);
  const standardError = Math.sqrt(variance / rounds);
  const measured = reducedFraction(paid, staked);
  const mean = ratio(paid, staked);
  const confidence99 = { low: mean - Z_99 * standardError, high: mean + Z_99 * standardError };
  const exactValue = ratio(exact.numerator, exact.denominator);
  return {
    rounds,
    wins,
    totalStakeMicro: staked,
    totalPayoutMicro: paid,
    measured: { ...measured, ...rtpText(measured) },
    standardError,
    confidence99,
    exact,
    exactInside: confidence99.low <= exactValue && exactValue <= confidence99.high,
  };
}
