import { curveCents } from '../src/shared/domain/games/crash-curve.js';
import type { CrashRoundRow } from './crash-rounds.js';
import type { BetRecord, CashOutRecord, ResultRecord } from './players.js';
import { percentile, round, summarize, type Summary } from './stats.js';

// A crash run's own section (D40): the cash-outs by hand (their ack, what was decided, and how
// far the multiplier granted was from the one the player saw when it clicked), the auto
// cash-outs, and the checks that every decision agrees with what the players were told and
// with the service's arrival stamp. A cash-out refused too_late is the game, not a failure;
// any other refusal, and any disagreement, is one.

export type CrashReport = {
  // the highest target, in cents (crash-play.ts)
  cashOutMaxCents: number;
  bets: { byHand: number; auto: number };
  // cash_out sent to its ack, every one answered; with its p95
  cashOutAckMs: Summary & { p95: number | null };
  cashOuts: {
    sent: number;
    perS: number;
    won: number;
    tooLate: number;
    tooLatePercent: number;
    // too_late although the player's clock showed the curve below the crash point at the
    // click: lost between the click and the arrival stamp
    tooLateBelowCrashOnPlayerClock: number;
    // the player's clock had already passed the crash point (its round_result had not come)
    tooLatePastCrashOnPlayerClock: number;
    // clicked on the bet's ack, which came after the player's clock reached the target
    clickedOnBetAck: number;
    // the accepted rounds by hand whose round_result came before the player's clock reached
    // the target: crashed first, no click
    notSentCrashedFirst: number;
  };
  // the won cash-outs: the multiplier granted minus the one the player's clock showed at the
  // click (cents), and the share within one cent
  gapCents: Summary & { withinOneCentPercent: number | null };
  // the same against this machine's clock at the click (the service's: one machine), which a
  // player with a perfect clock would have seen: what the click's transit alone costs
  gapOnTrueClockCents: Summary & { withinOneCentPercent: number | null };
  // the service's arrival stamp minus the click (ms into the flight), the ack's arrival minus
  // the stamp (the decision and the ack's way back), and how far behind the player's clock ran
  // at the click (the ROLLING round_state's delivery)
  clickToArrivalStampMs: Summary;
  arrivalStampToAckMs: Summary;
  playerClockBehindMs: Summary;
  // won cash-outs whose multiplier is not the curve's at their arrival stamp (D40: 0)
  grantedOffArrivalStamp: number;
  auto: { won: number; lost: number };
};

export type CrashObservations = {
  cashOutMaxCents: number;
  bets: readonly BetRecord[];
  cashOuts: readonly CashOutRecord[];
  results: ReadonlyMap<string, ResultRecord>;
  rounds: readonly CrashRoundRow[];
  bettingSeconds: number;
  // the bench's stake, in micro-units
  stakeMicro: bigint;
};

const withP95 = (samples: number[]): Summary & { p95: number | null } => ({
  ...summarize(samples),
  p95: samples.length > 0 ? round(percentile([...samples].sort((a, b) => a - b), 95)) : null,
});

const withinOneCent = (gaps: number[]) => (gaps.length > 0 ? round((gaps.filter((gap) => Math.abs(gap) <= 1).length / gaps.length) * 100, 3) : null);

export function analyseCrash(o: CrashObservations): { report: CrashReport; failures: string[] } {
  const failures: string[] = [];
  const roundById = new Map(o.rounds.map((row) => [row.roundId, row]));
  const accepted = o.bets.filter((bet) => bet.ok);
  const clicked = new Set(o.cashOuts.map((cashOut) => cashOut.roundId));
  const payoutOf = (cents: number) => ((o.stakeMicro * BigInt(cents)) / 100n).toString();

  const answered = o.cashOuts.filter((cashOut) => cashOut.ackAt !== undefined);
  const won = o.cashOuts.filter((cashOut) => cashOut.ok);
  const tooLate = o.cashOuts.filter((cashOut) => cashOut.reason === 'too_late');
  const gaps: number[] = [];
  const trueGaps: number[] = [];
  const toArrival: number[] = [];
  const stampToAck: number[] = [];
  const behind: number[] = [];
  let offStamp = 0;
  let belowCrash = 0;
  for (const cashOut of o.cashOuts) {
    if (cashOut.ok === false && cashOut.reason !== 'too_late') failures.push(`cash_out:${cashOut.reason}`);
    behind.push(cashOut.flightMs - cashOut.clientFlightMs);
    const result = o.results.get(cashOut.roundId)?.crash;
    const row = roundById.get(cashOut.roundId);
    if (cashOut.reason === 'too_late') {
      if (result && cashOut.seenCents < result.crashCents) belowCrash++;
      if (o.results.get(cashOut.roundId)?.won) failures.push('cash_out:too_late_but_won');
    }
    if (!cashOut.ok) continue;
    const granted = cashOut.grantedCents!;
    gaps.push(granted - cashOut.seenCents);
    trueGaps.push(granted - Number(curveCents(Math.max(0, Math.floor(cashOut.flightMs)))));
    // D40: the ack, the round_result and the payout tell one decision, below the crash point
    if (!result || result.cashOutCents !== granted || result.payoutMicro !== cashOut.payoutMicro || cashOut.payoutMicro !== payoutOf(granted)) {
      failures.push('cash_out:result_mismatch');
    } else if (granted >= result.crashCents) failures.push('cash_out:granted_at_or_past_crash');
    if (row?.cashOutMs === null || row?.cashOutMs === undefined) failures.push('cash_out:no_arrival_stamp');
    else {
      toArrival.push(row.cashOutMs - cashOut.flightMs);
      stampToAck.push(cashOut.ackAt! - (row.flightStartedAt + row.cashOutMs));
      if (Number(curveCents(row.cashOutMs)) !== granted || row.cashOutCents !== granted) offStamp++;
    }
  }
  for (let i = 0; i < offStamp; i++) failures.push('cash_out:granted_off_arrival_stamp');

  // an auto cash-out wins at its target iff the crash point is at least the target (D40)
  const auto = { won: 0, lost: 0 };
  let notSent = 0;
  for (const bet of accepted) {
    const result = o.results.get(bet.roundId!)?.crash;
    if (!result) continue;
    if (bet.auto) {
      const wins = bet.targetCents! <= result.crashCents;
      if (result.cashOutCents !== (wins ? bet.targetCents : null) || result.payoutMicro !== (wins ? payoutOf(bet.targetCents!) : '0')) {
        failures.push('auto_cash_out:mismatch');
      }
      auto[wins ? 'won' : 'lost']++;
    } else if (!clicked.has(bet.roundId!)) {
      // never clicked: the round crashed before the target (its result came first); a round by
      // hand that won without a click would be a bug
      if (result.cashOutCents !== null) failures.push('cash_out:won_without_click');
      notSent++;
    }
  }

  const report: CrashReport = {
    cashOutMaxCents: o.cashOutMaxCents,
    bets: { byHand: accepted.filter((bet) => !bet.auto).length, auto: accepted.filter((bet) => bet.auto).length },
    cashOutAckMs: withP95(answered.map((cashOut) => cashOut.ackAt! - cashOut.sentAt)),
    cashOuts: {
      sent: o.cashOuts.length,
      perS: o.bettingSeconds > 0 ? round(o.cashOuts.length / o.bettingSeconds, 1) : 0,
      won: won.length,
      tooLate: tooLate.length,
      tooLatePercent: o.cashOuts.length > 0 ? round((tooLate.length / o.cashOuts.length) * 100, 3) : 0,
      tooLateBelowCrashOnPlayerClock: belowCrash,
      tooLatePastCrashOnPlayerClock: tooLate.length - belowCrash,
      clickedOnBetAck: o.cashOuts.filter((cashOut) => cashOut.afterAck).length,
      notSentCrashedFirst: notSent,
    },
    gapCents: { ...summarize(gaps), withinOneCentPercent: withinOneCent(gaps) },
    gapOnTrueClockCents: { ...summarize(trueGaps), withinOneCentPercent: withinOneCent(trueGaps) },
    clickToArrivalStampMs: summarize(toArrival),
    arrivalStampToAckMs: summarize(stampToAck),
    playerClockBehindMs: summarize(behind),
    grantedOffArrivalStamp: offStamp,
    auto,
  };
  return { report, failures };
}

// D40's settlement timings: a round is decided at its cash-out's arrival stamp, or at its own
// end (its crash, or its auto cash-out); its round_result follows at once, and a win's
// /wallet/win after it. Each is measured from that instant on the service's clock (the
// flight's start plus the ms of the flight), since a flight has no common end.
export function crashSettlement(
  rounds: readonly CrashRoundRow[],
  results: ReadonlyMap<string, ResultRecord>,
  winArrivals: ReadonlyMap<string, number>,
): { roundResultMs: Summary; walletWinMs: Summary } {
  const afterOwnEnd: number[] = [];
  const afterDecision: number[] = [];
  for (const row of rounds) {
    // the measured players' rounds (the warm-up's are not)
    const result = results.get(row.roundId);
    if (!result) continue;
    // a round that ended by itself (not a cash-out by hand, stamped before its end)
    const byItself = row.cashOutMs === null || row.cashOutMs === row.endsAtMs;
    if (byItself) afterOwnEnd.push(result.at - (row.flightStartedAt + row.endsAtMs));
    const win = winArrivals.get(row.roundId);
    if (win !== undefined && row.cashOutMs !== null) afterDecision.push(win - (row.flightStartedAt + row.cashOutMs));
  }
  return { roundResultMs: summarize(afterOwnEnd), walletWinMs: summarize(afterDecision) };
}
