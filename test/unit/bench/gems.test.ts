import { expect } from 'chai';
import { analyseGems, gemsSettlement } from '../../../bench/gems-analysis.js';
import { nextPlayAt, parseFeatureBuyShare, type GemsPace } from '../../../bench/gems-play.js';
import type { BetRecord, ResultRecord } from '../../../bench/players.js';
import type { LedgerEntry } from '../../../src/simulator/ledger.js';

// A Gem Vault run (D41): a player's pace (one round at a time, minRoundMs between plays on the
// service's clock), and the run's section: plays, play to round_result, and the wallet's wins
// against round_result's payouts.

describe('bench gems: the pace of a player', () => {
  const pace = (fields: Partial<GemsPace>): GemsPace => ({ sentWallMs: 1000, resulted: false, won: false, balanceUpdatesDue: 0, ...fields });

  it('plays at once first, then minRoundMs after the last play\'s ack, once its result (and a win\'s credit) is told', () => {
    expect(nextPlayAt(undefined, 0, 1000)).to.equal(0);
    // no ack yet: in play
    expect(nextPlayAt(pace({}), 0, 1000)).to.equal(undefined);
    // accepted, no round_result yet
    expect(nextPlayAt(pace({ ackWallMs: 1020, accepted: true, roundId: 'r' }), 1, 1000)).to.equal(undefined);
    // a loss: minRoundMs after the ack
    expect(nextPlayAt(pace({ ackWallMs: 1020, accepted: true, roundId: 'r', resulted: true, balanceUpdatesDue: 1 }), 1, 1000)).to.equal(2020);
    // a win: not before its credit's balance_update, which makes two with the debit's
    const win = pace({ ackWallMs: 1020, accepted: true, roundId: 'r', resulted: true, won: true, balanceUpdatesDue: 2 });
    expect(nextPlayAt(win, 1, 1000)).to.equal(undefined);
    expect(nextPlayAt(win, 2, 1000)).to.equal(2020);
    // refused: minRoundMs after its ack all the same
    expect(nextPlayAt(pace({ ackWallMs: 1005, accepted: false }), 0, 1000)).to.equal(2005);
  });

  it('reads --feature-buy-share as a decimal from 0 to 1', () => {
    expect(['0', '1', '0.2', '.5', '1.0', '0.125'].map(parseFeatureBuyShare)).to.deep.equal([0, 1, 0.2, 0.5, 1, 0.125]);
    expect(['1.5', '-0.1', '', 'half', '1e-1', '2'].map(parseFeatureBuyShare)).to.deep.equal([undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});

describe('bench gems: the run\'s section', () => {
  const play = (roundId: string, fields: Partial<BetRecord> = {}): BetRecord => ({
    cycleId: `b-${roundId}`,
    sentAt: 100,
    ackAt: 120,
    ok: true,
    betId: `b-${roundId}`,
    roundId,
    featureBuy: false,
    ...fields,
  });
  const told = (roundId: string, payoutMicro: bigint, at = 150): [string, ResultRecord] => [
    roundId,
    { at, cycleId: `b-${roundId}`, won: payoutMicro > 0n, gems: { betId: `b-${roundId}`, payoutMicro: payoutMicro.toString(), featurePurchased: false } },
  ];
  const credit = (roundId: string, amountMicro: bigint): LedgerEntry => ({
    type: 'win',
    transactionUuid: `t-${roundId}`,
    roundId,
    operatorId: 'o',
    playerRef: 'p',
    currency: 'EUR',
    amountMicro,
    balanceAfterMicro: 0n,
    requestUuid: `q-${roundId}`,
    at: new Date(0),
  });
  const observe = (bets: BetRecord[], results: [string, ResultRecord][], ledger: LedgerEntry[]) =>
    analyseGems({ minRoundMs: 1000, featureBuyShare: 0, stakeMicro: 100_000n, players: 2, bets, results: new Map(results), ledger, bettingSeconds: 2 });

  it('counts the plays, times each from its play to its round_result, and finds every win paid exactly', () => {
    const bets = [play('a'), play('b', { featureBuy: true, sentAt: 200, ackAt: 230 }), play('c', { ok: false, reason: 'service_busy', roundId: undefined, betId: undefined })];
    const { report, failures } = observe(bets, [told('a', 250_000n, 160), told('b', 0n, 300)], [credit('a', 250_000n), credit('elsewhere', 999n)]);
    expect(failures).to.deep.equal([]);
    expect(report.plays).to.deep.equal({ sent: 3, accepted: 2, refusedByReason: { service_busy: 1 }, won: 1, featureBought: 1, perS: 1.5, perPlayerPerS: 0.75 });
    expect(report.playToResultMs).to.include({ count: 2, p50: 60, p95: 100, max: 100 });
    // a win of a play not measured here (the warm-up's) is not the run's
    expect(report.payouts).to.deep.equal({ resultsMicro: '250000', walletWinsMicro: '250000', sumsEqual: true, winsMissing: 0, winsMismatched: 0, winsUnexpected: 0 });
  });

  it('fails a win of another amount, and a win of a play its round_result said lost; counts a missing win', () => {
    const { report, failures } = observe(
      [play('a'), play('b'), play('c')],
      [told('a', 250_000n), told('b', 0n), told('c', 120_000n)],
      [credit('a', 240_000n), credit('b', 10n)],
    );
    expect(failures).to.deep.equal(['play:win_amount_mismatch', 'play:win_without_won_result']);
    expect(report.payouts).to.deep.equal({ resultsMicro: '370000', walletWinsMicro: '240010', sumsEqual: false, winsMissing: 1, winsMismatched: 1, winsUnexpected: 1 });
  });

  it('times round_result and the win from the play\'s ack', () => {
    const timings = gemsSettlement([play('a'), play('b')], new Map([told('a', 1n, 170), told('b', 0n, 140)]), new Map([['a', 200]]));
    expect(timings.roundResultMs).to.include({ count: 2, p50: 20, max: 50 });
    expect(timings.walletWinMs).to.include({ count: 1, p50: 80 });
  });
});
