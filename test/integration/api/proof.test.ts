import { expect } from 'chai';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { RoundState, SessionState } from '../../../src/shared/platform/db/client.js';
import { verifyDiceProof } from '../../../src/shared/domain/proof.js';
import { sealServerSeed } from '../../../src/shared/game/fairness/seed-vault.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { send, type ApiResponse } from '../../support/signed-client.js';

// GET /v1/rounds/{roundId}/proof: contract 4.1 and 2.11, DECISIONS D2 (derivation; a proof
// only for a SETTLED or VOIDED-with-outcome round whose seed is retired), D5 (expiry retires
// the seed), D19 (weights and sessionId), D3 (404 codes), D10 (read rate limit). The rounds
// are fixture rows written straight to the database, with outcomes derived below.

// D2 from its text, independently of src/shared/domain/dice.ts
function referenceDice(serverSeed: string, clientSeed: string, nonce: number, low: bigint, high: bigint) {
  const hex = createHmac('sha256', serverSeed).update(`${clientSeed}:${nonce}`).digest('hex');
  const a = BigInt(`0x${hex.slice(0, 8)}`);
  const b = BigInt(`0x${hex.slice(8, 16)}`);
  const side = a * (low + high) < low * 2n ** 32n ? 'LOW' : 'HIGH';
  const face = (side === 'LOW' ? 1 : 4) + Number(b % 3n);
  return { side, face };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const MINUTE = 60_000;

type RoundSpec = { state: RoundState; outcome: boolean; lowWeight?: bigint; highWeight?: bigint };
type SessionSpec = { state?: SessionState; retired?: boolean; expiresInMs?: number };
type Fixture = { sessionId: string; serverSeed: string; clientSeed: string; expiresAt: Date; roundIds: string[] };

function expectError(response: ApiResponse, status: number, error: string) {
  expect(response.status, response.text).to.equal(status);
  expect(response.body.error, response.text).to.equal(error);
  expect(response.body.message).to.be.a('string').and.not.equal('');
}

describe('GET /v1/rounds/{roundId}/proof (contract 2.11, D2, D19)', () => {
  let h: Harness;
  let cycleNumber = 0;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  // requests signed with the service's clock, which a test may move
  const get = (operator: TestOperator, path: string) =>
    operator.request('GET', path, undefined, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });
  const proofOf = (operator: TestOperator, roundId: string) => get(operator, `/v1/rounds/${roundId}/proof`);

  // a session with one seed and a round (with its bet) per spec, nonces 0, 1, ..., each in a
  // cycle of its own
  async function fixture(operator: TestOperator, session: SessionSpec, rounds: RoundSpec[]): Promise<Fixture> {
    const db = h.svc.db;
    const now = h.svc.now();
    const base = { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' };
    const sessionId = randomUUID();
    const seedId = randomUUID();
    const serverSeed = randomBytes(32).toString('hex');
    const clientSeed = uniqueId('client');
    const expiresAt = new Date(now.getTime() + (session.expiresInMs ?? 60 * MINUTE));
    const state = session.state ?? 'ACTIVE';
    const playerRef = uniqueId('player');
    await db.session.create({
      data: {
        ...base,
        id: sessionId,
        playerRef,
        lang: 'en',
        jurisdiction: 'MT',
        mode: 'REAL',
        state,
        createdAt: now,
        expiresAt,
        terminatedAt: state === 'TERMINATED' ? now : null,
        seeds: {
          create: {
            id: seedId,
            encryptedServerSeed: sealServerSeed(h.svc.config.masterKey, seedId, serverSeed),
            serverSeedHash: sha256(serverSeed),
            clientSeed,
            nextNonce: rounds.length,
            retiredAt: session.retired ? now : null,
          },
        },
      },
    });
    await db.engine.upsert({ where: { operatorId_gameCode_currency: base }, create: base, update: {} });
    const roundIds: string[] = [];
    for (const [nonce, spec] of rounds.entries()) {
      const lowWeight = spec.lowWeight ?? 1n;
      const highWeight = spec.highWeight ?? 1n;
      const cycle = await db.cycle.create({
        data: {
          ...base,
          id: randomUUID(),
          number: ++cycleNumber,
          phase: spec.state === 'SETTLED' || spec.state === 'VOIDED' ? 'FINISHED' : spec.state,
          bettingWindowMs: 15000,
          rollingWindowMs: 4000,
          cooldownMs: 3000,
          minBetMicro: 10000n,
          maxBetMicro: 100000000n,
          commissionMicro: 3000n,
          payoutMultiplierScaled: 200000n,
          lowWeight,
          highWeight,
        },
      });
      const dice = spec.outcome ? referenceDice(serverSeed, clientSeed, nonce, lowWeight, highWeight) : null;
      const roundId = randomUUID();
      const betId = randomUUID();
      // the bet comes first: its roundId is allocated at placement, and the round references it
      await db.bet.create({
        data: {
          ...base,
          id: betId,
          sessionId,
          cycleId: cycle.id,
          roundId,
          playerRef,
          side: 'LOW',
          amountMicro: 1000000n,
          status: spec.state === 'SETTLED' ? 'SETTLED' : spec.state === 'VOIDED' ? 'VOIDED' : 'ACCEPTED',
          betTransactionUuid: randomUUID(),
          cycleCreatedAt: cycle.createdAt,
        },
      });
      await db.round.create({
        data: {
          ...base,
          id: roundId,
          sessionId,
          cycleId: cycle.id,
          seedId,
          betId,
          cycleCreatedAt: cycle.createdAt,
          nonce,
          state: spec.state,
          settled: spec.state === 'SETTLED',
          lowWeight,
          highWeight,
          outcomeSide: dice?.side ?? null,
          outcomeSum: dice?.face ?? null,
          diceValues: dice ? [dice.face] : [],
          resultAt: dice ? now : null,
          settledAt: spec.state === 'SETTLED' ? now : null,
          voidedAt: spec.state === 'VOIDED' ? now : null,
          voidReason: spec.state === 'VOIDED' ? 'session_terminated' : null,
        },
      });
      roundIds.push(roundId);
    }
    return { sessionId, serverSeed, clientSeed, expiresAt, roundIds };
  }

  // the body checked by the service's verifier and by the independent derivation above
  function expectVerifiableProof(body: any, f: Fixture, roundId: string, nonce: number, weights = { low: 1n, high: 1n }) {
    const dice = referenceDice(f.serverSeed, f.clientSeed, nonce, weights.low, weights.high);
    expect(body).to.deep.equal({
      roundId,
      gameCode: 'dice',
      rngVersion: 'dice-hmac-sha256-v1',
      mathVersion: 'dice-1.0.0',
      serverSeed: f.serverSeed,
      serverSeedHash: sha256(f.serverSeed),
      clientSeed: f.clientSeed,
      nonce,
      outcome: { type: 'DICE', diceValues: [dice.face], outcomeSum: dice.face, outcomeSide: dice.side },
      lowWeight: weights.low.toString(),
      highWeight: weights.high.toString(),
      sessionId: f.sessionId,
    });
    const verdict = verifyDiceProof(body);
    expect(verdict.valid, JSON.stringify(verdict.checks)).to.equal(true);
    // the independent check: the commitment, then the outcome from the revealed seed
    expect(sha256(body.serverSeed)).to.equal(body.serverSeedHash);
    const again = referenceDice(body.serverSeed, body.clientSeed, body.nonce, BigInt(body.lowWeight), BigInt(body.highWeight));
    expect([again.side, again.face]).to.deep.equal([body.outcome.outcomeSide, body.outcome.diceValues[0]]);
  }

  it('200: a SETTLED round of a terminated session reveals the seed, and the proof verifies', async () => {
    const operator = await h.onboard();
    const f = await fixture(operator, { state: 'TERMINATED', retired: true }, [
      { state: 'SETTLED', outcome: true },
      { state: 'SETTLED', outcome: true, lowWeight: 3n, highWeight: 1n },
    ]);
    const first = await proofOf(operator, f.roundIds[0]!);
    expect(first.status, first.text).to.equal(200);
    expectVerifiableProof(first.body, f, f.roundIds[0]!, 0);

    // the second round carries its own weight snapshot (D19), here 3:1
    const second = await proofOf(operator, f.roundIds[1]!.toUpperCase());
    expect(second.status, second.text).to.equal(200);
    expectVerifiableProof(second.body, f, f.roundIds[1]!, 1, { low: 3n, high: 1n });
  });

  it('200: a VOIDED round with a persisted outcome has a proof', async () => {
    const operator = await h.onboard();
    const f = await fixture(operator, { state: 'TERMINATED', retired: true }, [{ state: 'VOIDED', outcome: true }]);
    const response = await proofOf(operator, f.roundIds[0]!);
    expect(response.status, response.text).to.equal(200);
    expectVerifiableProof(response.body, f, f.roundIds[0]!, 0);
  });

  it('404 round_not_found: another operator\'s round, an unknown uuid, a path that is not a uuid', async () => {
    const owner = await h.onboard();
    const other = await h.onboard();
    const f = await fixture(owner, { state: 'TERMINATED', retired: true }, [{ state: 'SETTLED', outcome: true }]);
    expect((await proofOf(owner, f.roundIds[0]!)).status).to.equal(200);

    expectError(await proofOf(other, f.roundIds[0]!), 404, 'round_not_found');
    expectError(await proofOf(owner, randomUUID()), 404, 'round_not_found');
    expectError(await proofOf(owner, 'not-a-uuid'), 404, 'round_not_found');
    expectError(await proofOf(owner, '12345'), 404, 'round_not_found');
  });

  it('404 round_not_settled: rounds still running, and a VOIDED round without an outcome', async () => {
    const operator = await h.onboard();
    const f = await fixture(operator, { state: 'TERMINATED', retired: true }, [
      { state: 'BETTING_OPEN', outcome: false },
      { state: 'ROLLING', outcome: false },
      { state: 'RESULT', outcome: true },
      { state: 'VOIDED', outcome: false },
    ]);
    for (const roundId of f.roundIds) {
      const response = await proofOf(operator, roundId);
      expectError(response, 404, 'round_not_settled');
      expect(response.text).to.not.contain(f.serverSeed);
    }
  });

  it('404 seed_not_revealed with revealableAfter while the session lives; 200 once it expires (D2, D5)', async () => {
    const operator = await h.onboard();
    const f = await fixture(operator, { state: 'ACTIVE', expiresInMs: 2 * MINUTE }, [{ state: 'SETTLED', outcome: true }]);
    const live = await proofOf(operator, f.roundIds[0]!);
    expectError(live, 404, 'seed_not_revealed');
    expect(live.body.revealableAfter).to.equal(f.expiresAt.toISOString());
    expect(live.text).to.not.contain(f.serverSeed);

    // no process has marked the session expired or the seed retired: expiry alone reveals
    h.shiftClock(2 * MINUTE + 1000);
    try {
      const expired = await proofOf(operator, f.roundIds[0]!);
      expect(expired.status, expired.text).to.equal(200);
      expectVerifiableProof(expired.body, f, f.roundIds[0]!, 0);
    } finally {
      h.shiftClock(-(2 * MINUTE + 1000));
    }
  });

  it('a rotated (retired) seed of a live session is revealed; terminating the session reveals the current one', async () => {
    const operator = await h.onboard();
    const rotated = await fixture(operator, { state: 'ACTIVE', retired: true }, [{ state: 'SETTLED', outcome: true }]);
    const response = await proofOf(operator, rotated.roundIds[0]!);
    expect(response.status, response.text).to.equal(200);
    expectVerifiableProof(response.body, rotated, rotated.roundIds[0]!, 0);

    const live = await fixture(operator, { state: 'ACTIVE' }, [{ state: 'SETTLED', outcome: true }]);
    expectError(await proofOf(operator, live.roundIds[0]!), 404, 'seed_not_revealed');
    const terminated = await operator.request('POST', `/v1/session/${live.sessionId}/terminate`, {});
    expect(terminated.status, terminated.text).to.equal(200);
    const after = await proofOf(operator, live.roundIds[0]!);
    expect(after.status, after.text).to.equal(200);
    expectVerifiableProof(after.body, live, live.roundIds[0]!, 0);
  });

  it('401 unsigned or badly signed', async () => {
    const operator = await h.onboard();
    const f = await fixture(operator, { state: 'TERMINATED', retired: true }, [{ state: 'SETTLED', outcome: true }]);
    const path = `/v1/rounds/${f.roundIds[0]}/proof`;
    const unsigned = await send(`${h.baseUrl}${path}`, { method: 'GET' });
    expectError(unsigned, 401, 'invalid_signature');
    expect(unsigned.body.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
    expect(unsigned.text).to.not.contain(f.serverSeed);
    const badlySigned = await operator.request('GET', path, undefined, { signPath: `/v1/rounds/${randomUUID()}/proof` });
    expectError(badlySigned, 401, 'invalid_signature');
    expect(badlySigned.text).to.not.contain(f.serverSeed);
  });

  it('shares the read rate limit (D10): a burst of 60, then 429 with Retry-After, also for the other reads', async () => {
    const operator = await h.onboard();
    const f = await fixture(operator, { state: 'TERMINATED', retired: true }, [{ state: 'SETTLED', outcome: true }]);
    const startedAt = performance.now();
    const responses: ApiResponse[] = [];
    // batches of 20 until one is refused (bounded), not a fixed 120: on a loaded box a fixed
    // burst may be sent no faster than the refill (20 a second) and never be refused
    for (let batch = 0; batch < 25 && !responses.some((r) => r.status === 429); batch++) {
      responses.push(...(await Promise.all(Array.from({ length: 20 }, () => proofOf(operator, f.roundIds[0]!)))));
    }
    const seconds = (performance.now() - startedAt) / 1000;
    const passed = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status !== 200);
    expect(passed.length, 'the whole burst passes').to.be.at.least(60);
    expect(passed.length, 'nothing beyond the burst and what refilled meanwhile').to.be.at.most(60 + Math.ceil(20 * seconds));
    expect(limited).to.not.be.empty;
    for (const response of limited) {
      expectError(response, 429, 'rate_limited');
      expect(Number(response.headers.get('retry-after'))).to.be.at.least(1);
    }
    // the same bucket as every GET /v1 read: with it empty, a burst of other reads is
    // limited too (at most the tokens refilled meanwhile pass)
    const others = await Promise.all(Array.from({ length: 10 }, () => get(operator, `/v1/rounds/${f.roundIds[0]}/dispute-pack`)));
    expect(others.filter((r) => r.status === 429).length, 'dispute-pack reads limited by the same bucket').to.be.at.least(5);
  });
});
