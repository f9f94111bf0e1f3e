import { expect } from 'chai';
import { loadConfig, ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { createDatabase } from '../../../src/shared/platform/db/client.js';
import { migrate } from '../../../src/shared/platform/db/migrate.js';
import { createReadReplica } from '../../../src/shared/platform/db/replica.js';
import { AppError } from '../../../src/shared/platform/errors.js';
import { createLogger } from '../../../src/shared/platform/logger.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer } from '../../support/game.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { checkMoneyInvariants, waitForQuiescence } from '../../support/invariants.js';
import { startPrimaryAndReplica, type PrimaryAndReplica } from '../../support/postgres-replica.js';
import type { Player } from '../../support/player.js';
import type { ApiResponse } from '../../support/signed-client.js';

// D36: with DATABASE_REPLICA_URL, the reports and reconciliation reads (GET /v1/rounds,
// GET /v1/rounds/{id}, GET /v1/reports/ggr, GET /v1/reports/wallet-calls) run on the
// replica, and only once it has replayed what the primary had made durable: a replica that
// lags or is away answers 503 service_unavailable, never an older figure. Everything else,
// and every money path, runs on the primary: with the replica's replay paused, or the
// replica stopped, players launch, bet, are settled and paid as usual.
//
// The suite makes a primary and a streaming replica of its own (test/support/
// postgres-replica.ts), and runs every role in this process against them.

const STAKE = 1_000_000n;
const FUNDS = 10_000_000n;
const DATABASE = 'rgs';
const RECONCILIATION_READS = ['/v1/reports/ggr', '/v1/reports/wallet-calls', '/v1/rounds'];

describe('read replica (D36)', function () {
  this.timeout(120_000);
  let pair: PrimaryAndReplica;
  let h: Harness;
  const players: Player[] = [];

  before(async () => {
    pair = await startPrimaryAndReplica();
    // as `rgs migrate` does it, on the primary; the replica receives it by streaming
    await migrate(pair.primaryUrl(DATABASE), undefined, { masterKey: loadConfig().masterKey });
    h = await startHarness(
      { DATABASE_URL: pair.primaryUrl(DATABASE), DATABASE_REPLICA_URL: pair.replicaUrl(DATABASE), REDIS_KEY_PREFIX: uniqueId('rgs-replica') },
      ROLE_NAMES,
    );
  });
  after(async () => {
    for (const player of players) player.close();
    await h?.close();
    await pair?.close();
  });

  // a funded player's session, one LOW bet, and the service left to settle and pay it (on
  // the primary: the harness's own client)
  async function playOneRound(operator: TestOperator): Promise<{ roundId: string; sessionId: string }> {
    const seat = await seatPlayer(h, operator, FUNDS);
    players.push(seat.player);
    await bettingWindowWithRoom(seat.player, 800);
    const ack = await seat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() }, 8000);
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 30_000 });
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: ack.roundId as string }, include: { bet: true } });
    expect(round.state).to.equal('SETTLED');
    expect(round.bet.status).to.equal('SETTLED');
    return { roundId: round.id, sessionId: seat.sessionId };
  }

  const roundsInGgr = async (operator: TestOperator): Promise<number> => {
    const ggr = await operator.request('GET', '/v1/reports/ggr?from=2020-01-01T00:00:00Z');
    expect(ggr.status, ggr.text).to.equal(200);
    return (ggr.body.games as { rounds: number }[]).reduce((sum, game) => sum + game.rounds, 0);
  };

  const expectUnavailable = (response: ApiResponse) => {
    expect(response.status, response.text).to.equal(503);
    expect(response.body.error).to.equal('service_unavailable');
    expect(response.body.message).to.be.a('string');
    expect(response.headers.get('retry-after')).to.equal('1');
  };

  it('serves the reconciliation reads from the replica once it has caught up: a paused replay makes them 503, never a lagging figure', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 1500 });
    const first = await playOneRound(operator);
    // caught up: the reads see the round the primary settled a moment ago
    expect(await roundsInGgr(operator)).to.equal(1);
    const listed = await operator.request('GET', '/v1/rounds');
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.rounds.map((r: { roundId: string }) => r.roundId)).to.deep.equal([first.roundId]);
    // the replica's pool is the one that read them
    const replicaReaders = await pair.countConnections('replica', 'rgs-replica');
    expect(replicaReaders, 'connections of the replica pool on the replica').to.be.greaterThan(0);
    expect(await pair.countConnections('primary', 'rgs-replica'), 'connections of the replica pool on the primary').to.equal(0);

    await pair.pauseReplay();
    try {
      // the primary moves on: a whole round is played, settled and paid while the replica
      // stands still
      const second = await playOneRound(operator);
      for (const path of RECONCILIATION_READS) expectUnavailable(await operator.request('GET', path));
      // a round the replica has not seen is not answered 404 from it
      expectUnavailable(await operator.request('GET', `/v1/rounds/${second.roundId}`));
      // the round's evidence is read on the primary (D32), as are the money paths
      const pack = await operator.request('GET', `/v1/rounds/${second.roundId}/dispute-pack`);
      expect(pack.status, pack.text).to.equal(200);
    } finally {
      await pair.resumeReplay();
    }
    // the first read after the replay resumed waits for it, and counts both rounds
    expect(await roundsInGgr(operator)).to.equal(2);
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
  });

  it('money paths never touch the replica: with the replica stopped, players launch, bet, are settled and paid; only the reconciliation reads answer 503', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 1500 });
    await pair.stopReplica();
    try {
      const { roundId } = await playOneRound(operator);
      expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
      // the wallet was debited and the result paid through the primary's records
      const calls = await h.svc.db.walletCall.findMany({ where: { operatorId: operator.operatorId } });
      expect(calls.map((call) => call.endpoint)).to.include('bet');
      for (const path of [...RECONCILIATION_READS, `/v1/rounds/${roundId}`]) expectUnavailable(await operator.request('GET', path));
      // the reads that stay on the primary answer
      expect((await operator.request('GET', `/v1/rounds/${roundId}/dispute-pack`)).status).to.equal(200);
      expect((await operator.request('GET', `/v1/rounds/${roundId}/replay-url`)).status).to.equal(200);
      expect((await operator.request('GET', '/v1/webhooks/deliveries')).status).to.equal(200);
    } finally {
      await pair.startReplica();
    }
    // back: the replica catches up and the round is there
    const detail = await operator.request('GET', '/v1/rounds');
    expect(detail.status, detail.text).to.equal(200);
    expect(detail.body.rounds).to.have.length(1);
  });

  it('a DATABASE_REPLICA_URL that names a server out of recovery never serves a report, and its pool refuses writes', async () => {
    // the primary named as the replica: it replays nothing, so it never counts as caught up
    const primary = createDatabase(pair.primaryUrl(DATABASE), 2);
    const replica = createReadReplica(primary, pair.primaryUrl(DATABASE), createLogger({ level: 'silent' }));
    const readOnly = createDatabase(pair.primaryUrl(DATABASE), 1, { readOnly: true });
    try {
      let ran = false;
      const refused = await replica.read(async () => (ran = true)).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).to.be.instanceOf(AppError);
      expect((refused as AppError).code).to.equal('service_unavailable');
      expect(ran, 'the report ran').to.equal(false);
      // default_transaction_read_only: a write sent there by mistake fails loudly (25006)
      const write = await readOnly.sql.query('CREATE TABLE replica_write_probe (id int)').then(
        () => undefined,
        (err: { code?: string }) => err.code,
      );
      expect(write).to.equal('25006');
    } finally {
      await replica.close();
      await readOnly.db.$disconnect();
      await primary.db.$disconnect();
    }
  });
});
