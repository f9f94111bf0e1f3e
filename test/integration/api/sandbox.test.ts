import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { ROLE_NAMES, loadConfig } from '../../../src/shared/platform/config.js';
import { deriveDice } from '../../../src/shared/domain/dice.js';
import { createOperator, updateOperator, OperatorInputError } from '../../../src/shared/game/operators/operators.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { operatorWith, until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { BUCKETS, bucketKey } from '../../../src/shared/platform/rate-limit.js';

// D35: sandbox operators. Their launches may fix the session's seeds (sandboxSeeds), so that
// the outcomes are exactly those D2 derives from them; anyone else sending the field is 422
// sandbox_only; their rate limits are ten times the contract's (8.1); their sessions are
// marked in every read and report; and none of it holds where sandbox is not enabled
// (SANDBOX_ENABLED, off by default with NODE_ENV=production).

const SERVER_SEED = 'a1'.repeat(32);
const CLIENT_SEED = 'sandbox-client-seed';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('sandbox operators (D35)', function () {
  this.timeout(60_000);
  let h: Harness;
  const players: Player[] = [];

  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(async () => {
    for (const player of players) player.close();
    await h.close();
  });

  const seeds = { serverSeed: SERVER_SEED, clientSeed: CLIENT_SEED };

  describe('sandboxSeeds at launch', () => {
    let sandbox: TestOperator;
    let ordinary: TestOperator;
    let sessionId: string;
    const roundIds: string[] = [];

    before(async () => {
      sandbox = await operatorWith(h, {}, { sandbox: true });
      ordinary = await h.onboard();
    });

    it("a sandbox operator's session plays exactly the outcomes D2 derives from the seeds it chose, nonce 0 first", async () => {
      const body = sandbox.sessionBody({ sandboxSeeds: seeds });
      h.wallet.setBalance(body.playerRef as string, 'EUR', 10_000_000n);
      const launch = await sandbox.request('POST', '/v1/session', body);
      expect(launch.status, launch.text).to.equal(200);
      // the commitment is the seed's hash, as for a generated one (D2), and the session is marked
      expect(launch.body).to.include({ serverSeedHash: sha256(SERVER_SEED), sandbox: true });
      sessionId = launch.body.sessionId;
      const player = await Player.connect(h.baseUrl, launch.body.sessionToken);
      players.push(player);
      expect(await player.waitFor('connected')).to.include({ clientSeed: CLIENT_SEED, nonce: 0, serverSeedHash: sha256(SERVER_SEED) });

      const used = new Set<string>();
      for (let nonce = 0; nonce < 3; nonce += 1) {
        const open = await player.waitFor(
          'round_state',
          (p) => p.phase === 'BETTING_OPEN' && !used.has(p.cycleId) && Date.parse(p.phaseEndsAt) - Date.now() > 300,
        );
        used.add(open.cycleId);
        const ack = await player.request('place_bet', { side: 'LOW', amountMicro: '100000' });
        expect(ack.ok, JSON.stringify(ack)).to.equal(true);
        const result = await player.waitFor('round_result', (p) => p.roundId === ack.roundId);
        const expected = deriveDice({ serverSeed: SERVER_SEED, clientSeed: CLIENT_SEED, nonce, lowWeight: 1n, highWeight: 1n });
        expect(result.nonce).to.equal(nonce);
        expect([result.side, result.sum, result.diceValues]).to.deep.equal([expected.side, expected.outcomeSum, expected.diceValues]);
        roundIds.push(ack.roundId);
      }
      // the proof of each round, once the session ended, carries the same seeds (D2, D19)
      for (const roundId of roundIds) {
        await until(`round ${roundId} settled`, async () => (await h.svc.db.round.findUniqueOrThrow({ where: { id: roundId } })).state === 'SETTLED');
      }
      expect((await sandbox.request('POST', `/v1/session/${sessionId}/terminate`, {})).status).to.equal(200);
      const proof = await sandbox.request('GET', `/v1/rounds/${roundIds[2]}/proof`);
      expect(proof.status, proof.text).to.equal(200);
      expect(proof.body).to.include({ serverSeed: SERVER_SEED, clientSeed: CLIENT_SEED, nonce: 2 });
    });

    it('marks its rounds sandbox: true in the listing, the round view and both reports; an ordinary operator reads false', async () => {
      const listing = await sandbox.request('GET', '/v1/rounds');
      expect(listing.status, listing.text).to.equal(200);
      const listed = listing.body.rounds.filter((r: { sessionId: string }) => r.sessionId === sessionId);
      expect(listed.map((r: { roundId: string }) => r.roundId).sort()).to.deep.equal([...roundIds].sort());
      expect(listed.map((r: { sandbox: boolean }) => r.sandbox)).to.deep.equal([true, true, true]);

      const view = await sandbox.request('GET', `/v1/rounds/${roundIds[0]}`);
      expect(view.status, view.text).to.equal(200);
      expect(view.body).to.include({ sandbox: true, demo: false });

      const ggr = await sandbox.request('GET', '/v1/reports/ggr');
      expect(ggr.status, ggr.text).to.equal(200);
      expect(ggr.body.games).to.have.length(1);
      expect(ggr.body.games[0]).to.include({ gameCode: 'dice', currency: 'EUR', rounds: 3, sandbox: true });

      const calls = await sandbox.request('GET', '/v1/reports/wallet-calls');
      expect(calls.status, calls.text).to.equal(200);
      expect(calls.body.sandbox).to.equal(true);

      const theirs = await ordinary.request('GET', '/v1/reports/wallet-calls');
      expect(theirs.body.sandbox).to.equal(false);
      const launch = await ordinary.launch();
      expect(launch.status, launch.text).to.equal(200);
      expect(launch.body.sandbox).to.equal(false);
    });

    it('an ordinary operator sending sandboxSeeds gets 422 sandbox_only in the D3 body, and no session', async () => {
      const before = await h.svc.db.session.count({ where: { operatorId: ordinary.operatorId } });
      const refused = await ordinary.launch({ sandboxSeeds: seeds });
      expect(refused.status, refused.text).to.equal(422);
      expect(refused.body.error).to.equal('sandbox_only');
      expect(refused.body.message).to.be.a('string').and.not.equal('');
      expect(refused.text).to.not.include(SERVER_SEED);
      expect(await h.svc.db.session.count({ where: { operatorId: ordinary.operatorId } })).to.equal(before);
    });

    it('malformed sandboxSeeds are 400 invalid_request, naming the field, for a sandbox operator too', async () => {
      const cases: [unknown, string, string][] = [
        [{ serverSeed: SERVER_SEED.toUpperCase(), clientSeed: CLIENT_SEED }, '/sandboxSeeds/serverSeed', 'RS_ERROR_WRONG_TYPES'],
        [{ serverSeed: 'abc', clientSeed: CLIENT_SEED }, '/sandboxSeeds/serverSeed', 'RS_ERROR_WRONG_TYPES'],
        [{ serverSeed: SERVER_SEED, clientSeed: 'with:colon' }, '/sandboxSeeds/clientSeed', 'RS_ERROR_WRONG_TYPES'],
        [{ serverSeed: SERVER_SEED }, '/sandboxSeeds/clientSeed', 'RS_ERROR_WRONG_SYNTAX'],
        [null, '/sandboxSeeds', 'RS_ERROR_WRONG_TYPES'],
        ['seeds', '/sandboxSeeds', 'RS_ERROR_WRONG_TYPES'],
      ];
      for (const [sandboxSeeds, path, status] of cases) {
        const refused = await sandbox.launch({ sandboxSeeds });
        expect(refused.status, JSON.stringify(sandboxSeeds)).to.equal(400);
        expect(refused.body).to.include({ error: 'invalid_request', status });
        expect(refused.body.details.map((d: { path: string }) => d.path)).to.include(path);
      }
    });
  });

  describe('rate limits', () => {
    // the bucket a request took its token from, as the middleware left it in Redis: a full
    // bucket less one token (plus what refilled in between, never above the burst)
    const tokensLeft = async (bucket: string, operatorId: string) => Number(await h.svc.redis.hget(bucketKey({ name: bucket }, operatorId), 'tokens'));

    it('a sandbox operator has ten times the burst of every bucket; an ordinary one the contract 8.1 figures', async () => {
      const sandbox = await h.onboard({ sandbox: true });
      const ordinary = await h.onboard();
      for (const operator of [sandbox, ordinary]) {
        expect((await operator.request('GET', '/v1/rounds')).status).to.equal(200);
        expect((await operator.launch({ mode: 'demo' })).status).to.equal(200);
      }
      expect(await tokensLeft('read', sandbox.operatorId)).to.be.within(598, 600);
      expect(await tokensLeft('session', sandbox.operatorId)).to.be.within(98, 100);
      expect(await tokensLeft('read', ordinary.operatorId)).to.be.within(58, 60);
      expect(await tokensLeft('session', ordinary.operatorId)).to.be.within(8, 10);

      // 11 launches in a row, more than an ordinary burst, are all taken from a sandbox bucket
      const launches = await Promise.all(Array.from({ length: 11 }, () => sandbox.launch({ mode: 'demo' })));
      expect(launches.map((r) => r.status)).to.deep.equal(Array(11).fill(200));

      // turning the flag off brings the contract's figures back at once
      await updateOperator(h.svc.db, sandbox.operatorId, { sandbox: false });
      expect((await sandbox.request('GET', '/v1/rounds')).status).to.equal(200);
      expect(await tokensLeft('read', sandbox.operatorId)).to.be.within(58, 60);
    });
  });

  describe('where sandbox is not enabled (production by default)', () => {
    it('SANDBOX_ENABLED is off by default with NODE_ENV=production, and on when set (with a warning)', () => {
      const production = { NODE_ENV: 'production', MASTER_KEY: 'ab'.repeat(32), JWT_SECRET: 'x'.repeat(40) };
      expect(loadConfig(production).sandboxEnabled).to.equal(false);
      const enabled = loadConfig({ ...production, SANDBOX_ENABLED: 'true' });
      expect(enabled.sandboxEnabled).to.equal(true);
      expect(enabled.warnings.join('\n')).to.include('SANDBOX_ENABLED');
      expect(loadConfig({}).sandboxEnabled).to.equal(true);
    });

    it('no operator can be made a sandbox operator there', async () => {
      const refusedCreate = await createOperator(h.svc.db, h.svc.config.masterKey, uniqueId('op'), { walletUrl: h.wallet.url, sandbox: true }, { sandboxEnabled: false }).catch(
        (err: unknown) => err,
      );
      expect(refusedCreate).to.be.instanceOf(OperatorInputError);
      expect((refusedCreate as Error).message).to.include('SANDBOX_ENABLED');
      const operator = await h.onboard();
      const refusedUpdate = await updateOperator(h.svc.db, operator.operatorId, { sandbox: true }, { sandboxEnabled: false }).catch((err: unknown) => err);
      expect(refusedUpdate).to.be.instanceOf(OperatorInputError);
      // turning it off is always allowed
      expect((await updateOperator(h.svc.db, operator.operatorId, { sandbox: false }, { sandboxEnabled: false })).sandbox).to.equal(false);
    });

    it("a sandbox operator's flag grants nothing: sandboxSeeds are 422 sandbox_only, the limits and the marks are ordinary", async () => {
      const operator = await h.onboard({ sandbox: true });
      h.svc.config.sandboxEnabled = false;
      try {
        const refused = await operator.launch({ sandboxSeeds: seeds, mode: 'demo' });
        expect(refused.status, refused.text).to.equal(422);
        expect(refused.body.error).to.equal('sandbox_only');
        expect(refused.body.message).to.include('SANDBOX_ENABLED');
        const launch = await operator.launch({ mode: 'demo' });
        expect(launch.status, launch.text).to.equal(200);
        expect(launch.body.sandbox).to.equal(false);
        expect(Number(await h.svc.redis.hget(bucketKey(BUCKETS.session, operator.operatorId), 'tokens'))).to.be.at.most(10);
      } finally {
        h.svc.config.sandboxEnabled = true;
      }
    });
  });
});
