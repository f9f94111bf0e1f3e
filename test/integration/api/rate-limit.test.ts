import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import type { ApiResponse } from '../../support/signed-client.js';

// Contract 8.1 and D3, D10: per-operator token buckets. Session creation: burst 10, steady 5
// per second. Reads (every GET /v1 endpoint, here the dispute pack): burst 60, steady 20 per
// second. The excess is 429 rate_limited with an integer Retry-After >= 1 and has no effect.
// Buckets refill in real time (Redis's clock), so every upper bound below allows for the
// tokens that elapsed time may have added.

const SESSION = { burst: 10, perSecond: 5 };
const READ = { burst: 60, perSecond: 20 };

// runs `count` calls with at most `concurrency` in flight
async function pool<T>(count: number, concurrency: number, call: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await call(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

// calls with at most `concurrency` in flight until one is refused (429), then no new one, up to
// `max`; every answer, in the order sent. A burst of a fixed size is refused only when it
// outruns the refill, which on a loaded box it may not: this one runs until the bucket is
// empty, however long that takes.
async function untilRefused(concurrency: number, call: (index: number) => Promise<ApiResponse>, max = 500): Promise<ApiResponse[]> {
  const results: ApiResponse[] = [];
  let refused = false;
  let next = 0;
  const worker = async () => {
    while (!refused && next < max) {
      const index = next++;
      results[index] = await call(index);
      if (results[index].status === 429) refused = true;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

const secondsSince = (startedAt: number) => (performance.now() - startedAt) / 1000;

function expectRateLimited(response: ApiResponse): number {
  expect(response.status, response.text).to.equal(429);
  expect(response.body.error).to.equal('rate_limited');
  expect(response.body.message).to.be.a('string').and.not.equal('');
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter, 'Retry-After header').to.match(/^[0-9]+$/);
  expect(Number(retryAfter)).to.be.at.least(1);
  return Number(retryAfter);
}

describe('rate limits (contract 8.1, D3, D10)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const sessionRows = (operatorId: string) => h.svc.db.session.count({ where: { operatorId } });
  const walletRequests = (operatorId: string) =>
    h.wallet.requests.filter((r) => (r.body as { operatorId?: unknown } | undefined)?.operatorId === operatorId).length;
  const walletAuditRows = (operatorId: string) => h.svc.db.walletCall.count({ where: { operatorId } });
  // a read that passes the signature and the bucket and then costs nothing: a roundId that is
  // not a UUID is 404 round_not_found before any query (D32), so the burst outruns the refill
  const disputePack = (operator: TestOperator) => operator.request('GET', '/v1/rounds/not-a-round/dispute-pack');

  it('session create: burst 10, then 429 with Retry-After; the excess creates nothing; per operator; steady 5/s after the wait', async () => {
    const a = await h.onboard();
    const b = await h.onboard();

    // 1. operator A: launches, 4 in flight at a time, until one is refused
    const bodies: Record<string, unknown>[] = [];
    const startedAt = performance.now();
    const burst = await untilRefused(4, (i) => a.request('POST', '/v1/session', (bodies[i] = a.sessionBody({ requestUuid: randomUUID() }))));
    const burstSeconds = secondsSince(startedAt);

    const passed = burst.filter((r) => r.status === 200);
    const limited = burst.map((r, i) => ({ r, body: bodies[i]! })).filter(({ r }) => r.status !== 200);
    expect(passed.length, 'the whole burst passes').to.be.at.least(SESSION.burst);
    expect(passed.length, 'nothing beyond the burst and what refilled meanwhile').to.be.at.most(
      SESSION.burst + Math.floor(SESSION.perSecond * burstSeconds),
    );
    expect(limited).to.not.be.empty;
    const retryAfter = Math.max(...limited.map(({ r }) => expectRateLimited(r)));
    expect(Number(limited[0]!.r.body.retryAfterSeconds)).to.be.at.least(1);

    // 2. at the same moment, operator B has its own full bucket
    const other = await pool(SESSION.burst, 4, () => b.launch());
    expect(other.map((r) => r.status)).to.deep.equal(new Array(SESSION.burst).fill(200));

    // 3. the limited requests changed nothing: sessions, wallet calls and idempotency keys
    //    exist only for the requests that passed
    expect(await sessionRows(a.operatorId)).to.equal(passed.length);
    expect(walletRequests(a.operatorId)).to.equal(passed.length);
    expect(await walletAuditRows(a.operatorId)).to.equal(passed.length);
    expect(await h.svc.db.idempotencyEntry.count({ where: { operatorId: a.operatorId } })).to.equal(passed.length);
    for (const { body } of limited) {
      expect(await h.svc.db.session.count({ where: { operatorId: a.operatorId, playerRef: body.playerRef as string } })).to.equal(0);
    }
    expect(await sessionRows(b.operatorId)).to.equal(SESSION.burst);

    // 4. after Retry-After (real time) requests pass again; a limited request retried with its
    //    requestUuid is processed now, not answered with a stored 429
    await sleep(retryAfter * 1000);
    const retried = limited[0]!.body;
    const retry = await a.request('POST', '/v1/session', retried);
    expect(retry.status, retry.text).to.equal(200);
    expect(await h.svc.db.session.count({ where: { operatorId: a.operatorId, playerRef: retried.playerRef as string } })).to.equal(1);

    // 5. the steady rate: about 5 per elapsed second, not a fresh burst of 10
    const steady = await untilRefused(4, () => a.launch());
    const passedAfterWait = 1 + steady.filter((r) => r.status === 200).length;
    expectRateLimited(steady.find((r) => r.status !== 200)!);
    expect(passedAfterWait).to.be.at.least(Math.floor(SESSION.perSecond * retryAfter) - 1);
    // every token ever granted: the burst plus what refilled since the first request
    expect(passed.length + passedAfterWait).to.be.at.most(SESSION.burst + Math.floor(SESSION.perSecond * secondsSince(startedAt)));
    expect(passedAfterWait).to.be.below(SESSION.burst);
    expect(await sessionRows(a.operatorId)).to.equal(passed.length + passedAfterWait);
    expect(walletRequests(a.operatorId)).to.equal(passed.length + passedAfterWait);
  });

  it('reads: 60 dispute-pack GETs pass (404 for a malformed roundId), then 429; the session bucket is separate', async () => {
    const operator = await h.onboard();
    const startedAt = performance.now();
    const responses = await untilRefused(6, () => disputePack(operator));
    const seconds = secondsSince(startedAt);

    const answered = responses.filter((r) => r.status === 404);
    const limited = responses.filter((r) => r.status !== 404);
    for (const response of answered) expect(response.body.error).to.equal('round_not_found');
    expect(answered.length, 'the whole burst passes').to.be.at.least(READ.burst);
    expect(answered.length).to.be.at.most(READ.burst + Math.floor(READ.perSecond * seconds));
    expect(limited).to.not.be.empty;
    for (const response of limited) expectRateLimited(response);

    // reads and launches do not share a bucket
    const launch = await operator.launch();
    expect(launch.status, launch.text).to.equal(200);
    // and another operator's reads are unaffected
    const other = await h.onboard();
    expect((await disputePack(other)).status).to.equal(404);
  });

  it('session launches do not drain the read bucket', async () => {
    const operator = await h.onboard();
    const launches = await untilRefused(4, () => operator.launch());
    expect(launches.filter((r) => r.status === 429)).to.not.be.empty;
    const read = await disputePack(operator);
    expect(read.status, read.text).to.equal(404);
  });
});
