import type { LedgerEntry } from '../src/simulator/ledger.js';
import type { BetRecord, ResultRecord } from './players.js';
import { percentile, round, summarize, type Summary } from './stats.js';

// A Gem Vault run's own section (D41): the plays (sent, accepted, refused by reason, won,
// bought), each play's time from its `play` to its round_result, and the check that the wallet
// received exactly what round_result told: for every measured play, its win in the wallet
// simulator's ledger against its round_result's payoutMicro, and the two sums over the run.
// Amounts are bigint micro-units (D18), shown as strings.

export type GemsReport = {
  minRoundMs: number;
  featureBuyShare: number;
  stakeMicro: string;
  plays: {
    sent: number;
    accepted: number;
    refusedByReason: Record<string, number>;
    won: number;
    featureBought: number;
    perS: number;
    // plays per player per second of playing: 1000 / minRoundMs at most
    perPlayerPerS: number;
  };
  // `play` sent to its round_result at the player, every accepted play with one; with its p95
  playToResultMs: Summary & { p95: number | null };
  payouts: {
    // the sum of round_result payoutMicro over the measured plays, and of the wallet's wins of
    // the same rounds (its ledger: each credit booked once, whatever the retries)
    resultsMicro: string;
    walletWinsMicro: string;
    sumsEqual: boolean;
    // won plays the wallet has no win for; wins of another amount than round_result's; wins of
    // a play whose round_result said lost (or never came)
    winsMissing: number;
    winsMismatched: number;
    winsUnexpected: number;
  };
};

export type GemsObservations = {
  minRoundMs: number;
  featureBuyShare: number;
  stakeMicro: bigint;
  players: number;
  bets: readonly BetRecord[];
  results: ReadonlyMap<string, ResultRecord>;
  ledger: readonly LedgerEntry[];
  bettingSeconds: number;
};

export function analyseGems(o: GemsObservations): { report: GemsReport; failures: string[] } {
  const failures: string[] = [];
  const accepted = o.bets.filter((bet) => bet.ok);
  const measured = new Set(accepted.map((bet) => bet.roundId!));
  const refusedByReason: Record<string, number> = {};
  for (const bet of o.bets) {
    if (bet.ok === false) refusedByReason[bet.reason ?? 'no_ack'] = (refusedByReason[bet.reason ?? 'no_ack'] ?? 0) + 1;
  }

  // the wallet's credits of the measured plays, by round (the warm-up's are not measured)
  const walletWins = new Map<string, bigint>();
  for (const entry of o.ledger) {
    if (entry.type !== 'win' || entry.roundId === undefined || !measured.has(entry.roundId)) continue;
    walletWins.set(entry.roundId, (walletWins.get(entry.roundId) ?? 0n) + entry.amountMicro);
  }

  let resultsMicro = 0n;
  let winsMissing = 0;
  let winsMismatched = 0;
  let won = 0;
  const toResult: number[] = [];
  for (const bet of accepted) {
    const result = o.results.get(bet.roundId!);
    if (!result) continue;
    toResult.push(result.at - bet.sentAt);
    const payout = BigInt(result.gems?.payoutMicro || '0');
    resultsMicro += payout;
    if (!result.won) continue;
    won++;
    const paid = walletWins.get(bet.roundId!);
    if (paid === undefined) winsMissing++;
    else if (paid !== payout) {
      winsMismatched++;
      failures.push('play:win_amount_mismatch');
    }
  }
  let winsUnexpected = 0;
  for (const roundId of walletWins.keys()) {
    if (o.results.get(roundId)?.won !== true) {
      winsUnexpected++;
      failures.push('play:win_without_won_result');
    }
  }
  const walletWinsMicro = [...walletWins.values()].reduce((sum, amount) => sum + amount, 0n);

  const sorted = [...toResult].sort((a, b) => a - b);
  const report: GemsReport = {
    minRoundMs: o.minRoundMs,
    featureBuyShare: o.featureBuyShare,
    stakeMicro: o.stakeMicro.toString(),
    plays: {
      sent: o.bets.length,
      accepted: accepted.length,
      refusedByReason,
      won,
      featureBought: accepted.filter((bet) => bet.featureBuy).length,
      perS: o.bettingSeconds > 0 ? round(o.bets.length / o.bettingSeconds, 1) : 0,
      perPlayerPerS: o.bettingSeconds > 0 && o.players > 0 ? round(o.bets.length / o.bettingSeconds / o.players, 3) : 0,
    },
    playToResultMs: { ...summarize(toResult), p95: sorted.length > 0 ? round(percentile(sorted, 95)) : null },
    payouts: {
      resultsMicro: resultsMicro.toString(),
      walletWinsMicro: walletWinsMicro.toString(),
      sumsEqual: resultsMicro === walletWinsMicro,
      winsMissing,
      winsMismatched,
      winsUnexpected,
    },
  };
  return { report, failures };
}

// D41's settlement timings: a play's outcome is derived as soon as its debit is accepted, so
// its round_result and its win are timed from the play's ack (a dice round's from the end of
// its ROLLING)
export function gemsSettlement(
  bets: readonly BetRecord[],
  results: ReadonlyMap<string, ResultRecord>,
  winArrivals: ReadonlyMap<string, number>,
): { roundResultMs: Summary; walletWinMs: Summary } {
  const toResult: number[] = [];
  const toWin: number[] = [];
  for (const bet of bets) {
    if (!bet.ok || bet.ackAt === undefined) continue;
    const result = results.get(bet.roundId!);
    if (result) toResult.push(result.at - bet.ackAt);
    const win = winArrivals.get(bet.roundId!);
    if (win !== undefined) toWin.push(win - bet.ackAt);
  }
  return { roundResultMs: summarize(toResult), walletWinMs: summarize(toWin) };
}
