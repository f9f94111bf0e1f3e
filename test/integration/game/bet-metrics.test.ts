import { expect } from 'chai';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { seatPlayer, until } from '../../support/game.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { ownStore } from '../../support/own-store.js';

// D15: what /metrics shows of the game as it is played: bets decided (rgs_bets_total, by
// result and bet_rejected reason), wallet job attempts (rgs_wallet_job_attempts_total, by
// endpoint and outcome) and the rounds in play (rgs_rounds, by state), read from a scrape as
// Prometheus reads it. Labels are bounded: no id of a bet, round, session or operator.

const START = 5_000_000n;
const STAKE = 1_000_000n;

type Sample = { name: string; labels: Record<string, string>; value: number };

function parse(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

describe('game metrics on /metrics (D15)', function () {
  this.timeout(30_000);
  let h: Harness;
  let store: Awaited<ReturnType<typeof ownStore>> | undefined;
  before(async () => {
    // the counters are the process's, and the retried count below is the injected 500's
    // alone: in the worker's shared database and queues, the rollbacks an earlier file left
    // retrying (its wallet gone) are run and counted here too (recovery, contract 2.13). The
    // harness's 1 s wallet timeout let a loaded CI box time a rollback out and count it
    // retried again.
    store = await ownStore('metrics');
    h = await startHarness({ ...store.env, WALLET_CALL_TIMEOUT_MS: '5000' }, ROLE_NAMES);
  });
  after(async () => {
    await h?.close();
    await store?.drop();
  });
  afterEach(() => {
    for (const endpoint of ['bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
  });

  const scrape = async () => parse(await (await fetch(`${h.baseUrl}/metrics`)).text());
  const valueOf = (samples: Sample[], name: string, labels: Record<string, string>) =>
    samples
      .filter((s) => s.name === name && Object.keys(labels).length === Object.keys(s.labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  // how much each named series moved between two scrapes
  const moved = (before: Sample[], after: Sample[], name: string, labels: Record<string, string>) =>
    valueOf(after, name, labels) - valueOf(before, name, labels);

  // D2: lowWeight 1 / highWeight 0 always rolls LOW
  async function operatorRollingLow(): Promise<TestOperator> {
    const operator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 800, rollingWindowMs: 200, cooldownMs: 200, lowWeight: 1n, highWeight: 0n });
    return operator;
  }

  async function bet(operator: TestOperator, funds: bigint) {
    const seat = await seatPlayer(h, operator, funds);
    await seat.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const ack = await seat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
    return { ...seat, ack };
  }

  it('an accepted bet and its win: rgs_bets_total{result="accepted"}, the round in play, then a completed win attempt', async () => {
    const before = await scrape();
    const { player, ack } = await bet(await operatorRollingLow(), START);
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const accepted = await scrape();
    expect(moved(before, accepted, 'rgs_bets_total', { result: 'accepted' })).to.equal(1);
    // its round is in play until it settles; every in-play state is always shown
    expect(valueOf(accepted, 'rgs_rounds', { state: 'BETTING_OPEN' }) + valueOf(accepted, 'rgs_rounds', { state: 'ROLLING' })).to.be.at.least(1);
    expect(accepted.filter((s) => s.name === 'rgs_rounds').map((s) => s.labels.state).sort()).to.deep.equal(['BETTING_OPEN', 'RESULT', 'ROLLING']);

    await player.waitFor('round_result', () => true, 10_000);
    const settled = await until('the win attempt counted', async () => {
      const now = await scrape();
      return moved(before, now, 'rgs_wallet_job_attempts_total', { endpoint: 'win', outcome: 'completed' }) === 1 ? now : null;
    });
    expect(moved(before, settled, 'rgs_bets_total', { result: 'rejected', reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY' })).to.equal(0);
    player.close();
  });

  it('a bet the wallet refuses: rgs_bets_total{result="rejected", reason} with the reason the player was told', async () => {
    const before = await scrape();
    const { player, ack } = await bet(await operatorRollingLow(), STAKE / 2n);
    expect(ack).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY' });
    const after = await scrape();
    expect(moved(before, after, 'rgs_bets_total', { result: 'rejected', reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY' })).to.equal(1);
    expect(moved(before, after, 'rgs_bets_total', { result: 'accepted' })).to.equal(0);
    player.close();
  });

  // the wallet answered the debit 500 without applying it: the rollback, once it gets
  // through, finds no such transaction, which is treated as settled (contract 7.1)
  it('an uncertain debit: rejected, its rollback counted retried, then treated as settled', async () => {
    h.wallet.setFault('bet', { kind: 'http', httpStatus: 500 }, 1);
    h.wallet.setFault('rollback', { kind: 'http', httpStatus: 500 }, 1);
    const before = await scrape();
    const { player, ack } = await bet(await operatorRollingLow(), START);
    expect(ack).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
    const after = await until('the rollback settled', async () => {
      const now = await scrape();
      return moved(before, now, 'rgs_wallet_job_attempts_total', { endpoint: 'rollback', outcome: 'treated_as_settled' }) === 1 ? now : null;
    });
    expect(moved(before, after, 'rgs_bets_total', { result: 'rejected', reason: 'wallet_rejected:RS_ERROR_UNKNOWN' })).to.equal(1);
    expect(moved(before, after, 'rgs_wallet_job_attempts_total', { endpoint: 'rollback', outcome: 'retried' })).to.equal(1);
    // no label names a bet, round, session or operator
    const names = new Set(['rgs_bets_total', 'rgs_wallet_job_attempts_total', 'rgs_rounds']);
    for (const sample of after.filter((s) => names.has(s.name))) {
      expect(Object.keys(sample.labels)).to.satisfy((keys: string[]) => keys.every((k) => ['result', 'reason', 'endpoint', 'outcome', 'state'].includes(k)));
      expect(Object.values(sample.labels).join(' ')).not.to.match(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    }
    expect(h.wallet.violations).to.deep.equal([]);
    player.close();
  });
});
