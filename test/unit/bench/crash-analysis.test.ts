import { expect } from 'chai';
import { curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { analyseCrash, crashSettlement } from '../../../bench/crash-analysis.js';
import type { CrashRoundRow } from '../../../bench/crash-rounds.js';
import type { BetRecord, CashOutRecord, ResultRecord } from '../../../bench/players.js';

// A crash run's section (D40) from what the players saw and what the service stored: the
// cash-outs by hand and what was decided, the gap between the multiplier seen at the click and
// the one granted, the auto cash-outs, and the disagreements that are failures.

const STAKE = 100_000n;
const START = 1_000_000;
const t = (cents: number) => curveTime(BigInt(cents));

const bet = (roundId: string, targetCents: number, auto: boolean): BetRecord => ({
  cycleId: 'c',
  sentAt: 0,
  ackAt: 5,
  ok: true,
  betId: `b-${roundId}`,
  roundId,
  targetCents,
  auto,
});
const result = (crashCents: number, cashOutCents: number | null, at = START + 20_000): ResultRecord => ({
  at,
  cycleId: 'c',
  won: cashOutCents !== null,
  crash: { crashCents, cashOutCents, payoutMicro: cashOutCents === null ? '0' : String(1000 * cashOutCents) },
});
// a click by hand: the player's clock 10 ms behind the service's
const click = (roundId: string, targetCents: number, ack: Partial<CashOutRecord>): CashOutRecord => ({
  cycleId: 'c',
  roundId,
  targetCents,
  clientFlightMs: t(targetCents),
  seenCents: targetCents,
  sentAt: START + t(targetCents) + 10,
  flightMs: t(targetCents) + 10,
  afterAck: false,
  ackAt: START + t(targetCents) + 30,
  ...ack,
});
const row = (roundId: string, crashCents: number, endsAtMs: number, cashOutMs: number | null, cashOutCents: number | null): CrashRoundRow => ({
  roundId,
  cycleId: 'c',
  flightStartedAt: START,
  endsAtMs,
  crashCents,
  cashOutMs,
  cashOutCents,
});

describe('bench crash section', () => {
  it('counts the cash-outs by hand and their decisions, the gaps, and the auto cash-outs; no failure when all agree', () => {
    // r1: clicked at 1.50 (seen), granted 1.51 at the arrival stamp 2 ms later; crash 3.00
    // r2: clicked at 1.80 on the player's clock, already past its 1.70 crash: too_late
    // r3: clicked at 1.20 on the player's clock, below its crash at 1.21, too_late on arrival
    // r4: crashed at 1.10 before the target 1.90: no click
    // r5, r6: auto at 1.40, crash 2.00 (won) and 1.30 (lost)
    const bets = [bet('r1', 150, false), bet('r2', 180, false), bet('r3', 120, false), bet('r4', 190, false), bet('r5', 140, true), bet('r6', 140, true)];
    const arrival = t(151);
    const cashOuts = [
      click('r1', 150, { ok: true, grantedCents: 151, payoutMicro: '151000', flightMs: arrival - 2, sentAt: START + arrival - 2, ackAt: START + arrival + 18 }),
      click('r2', 180, { ok: false, reason: 'too_late' }),
      click('r3', 120, { ok: false, reason: 'too_late' }),
    ];
    const results = new Map([
      ['r1', result(300, 151)],
      ['r2', result(170, null)],
      ['r3', result(121, null)],
      ['r4', result(110, null)],
      ['r5', result(200, 140)],
      ['r6', result(130, null)],
    ]);
    const rounds = [
      row('r1', 300, t(300), arrival, 151),
      row('r2', 170, t(170), null, null),
      row('r3', 121, t(121), null, null),
      row('r4', 110, t(110), null, null),
      row('r5', 200, t(140), t(140), 140),
      row('r6', 130, t(130), null, null),
    ];
    const { report, failures } = analyseCrash({ cashOutMaxCents: 200, bets, cashOuts, results, rounds, bettingSeconds: 2, stakeMicro: STAKE });
    expect(failures).to.deep.equal([]);
    expect(report.bets).to.deep.equal({ byHand: 4, auto: 2 });
    expect(report.auto).to.deep.equal({ won: 1, lost: 1 });
    expect(report.cashOuts).to.deep.equal({
      sent: 3,
      perS: 1.5,
      won: 1,
      tooLate: 2,
      tooLatePercent: 66.667,
      tooLateBelowCrashOnPlayerClock: 1,
      tooLatePastCrashOnPlayerClock: 1,
      clickedOnBetAck: 0,
      notSentCrashedFirst: 1,
    });
    // 20 ms each
    expect(report.cashOutAckMs).to.include({ count: 3, p50: 20, p95: 20 });
    expect(report.gapCents).to.include({ count: 1, p50: 1, withinOneCentPercent: 100 });
    expect(report.clickToArrivalStampMs).to.include({ count: 1, p50: 2 });
    // the ack 20 ms after the click, 2 ms of which before the stamp
    expect(report.arrivalStampToAckMs).to.include({ count: 1, p50: 18 });
    expect(report.playerClockBehindMs).to.include({ count: 3, p50: 10 });
    expect(report.grantedOffArrivalStamp).to.equal(0);
  });

  it('fails a refusal other than too_late, a grant off the arrival stamp, an ack the round_result contradicts, and a wrong auto cash-out', () => {
    const bets = [bet('r1', 150, false), bet('r2', 150, false), bet('r3', 150, false), bet('r4', 140, true), bet('r5', 150, false)];
    const cashOuts = [
      click('r1', 150, { ok: false, reason: 'not_flying' }),
      // granted 1.55 but stamped where the curve shows 1.50
      click('r2', 150, { ok: true, grantedCents: 155, payoutMicro: '155000' }),
      // the ack says 1.50, the round_result 1.52
      click('r3', 150, { ok: true, grantedCents: 150, payoutMicro: '150000' }),
      click('r5', 150, { ok: false, reason: 'too_late' }),
    ];
    const results = new Map([
      ['r1', result(300, null)],
      ['r2', result(300, 155)],
      ['r3', result(300, 152)],
      // auto at 1.40 below a crash at 2.00, told lost
      ['r4', result(200, null)],
      ['r5', result(300, 150)],
    ]);
    const rounds = [row('r2', 300, t(300), t(150), 155), row('r3', 300, t(300), t(150), 152)];
    const { failures } = analyseCrash({ cashOutMaxCents: 200, bets, cashOuts, results, rounds, bettingSeconds: 1, stakeMicro: STAKE });
    expect(failures.sort()).to.deep.equal(
      [
        'auto_cash_out:mismatch',
        'cash_out:granted_off_arrival_stamp',
        'cash_out:granted_off_arrival_stamp',
        'cash_out:not_flying',
        'cash_out:result_mismatch',
        'cash_out:too_late_but_won',
      ].sort(),
    );
  });

  it('times round_result from a round\'s own end and /wallet/win from its decision, for the measured players\' rounds only', () => {
    const rounds = [
      // lost at its crash; its result 40 ms after
      row('r1', 150, t(150), null, null),
      // auto cash-out at its own end; result 25 ms after, win 60 ms after
      row('r2', 300, t(140), t(140), 140),
      // by hand, stamped at 5000 ms: no own end; win 80 ms after the stamp
      row('r3', 300, t(300), 5000, 134),
      // the warm-up's: no result among the measured players
      row('w1', 150, t(150), null, null),
    ];
    const results = new Map([
      ['r1', result(150, null, START + t(150) + 40)],
      ['r2', result(300, 140, START + t(140) + 25)],
      ['r3', result(300, 134, START + 5010)],
    ]);
    const wins = new Map([
      ['r2', START + t(140) + 60],
      ['r3', START + 5080],
      ['w1', START + 99_999],
    ]);
    const settlement = crashSettlement(rounds, results, wins);
    expect(settlement.roundResultMs).to.include({ count: 2, p50: 25, max: 40 });
    expect(settlement.walletWinMs).to.include({ count: 2, p50: 60, max: 80 });
  });
});
