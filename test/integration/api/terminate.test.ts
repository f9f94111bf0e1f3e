import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import type { ApiResponse } from '../../support/signed-client.js';

// POST /v1/session/{id}/terminate: DECISIONS D7 (shape, states), D2 (a retired seed becomes
// revealable), D3 (error bodies), contract 3.3.

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function expectError(response: ApiResponse, status: number, error: string) {
  expect(response.status, response.text).to.equal(status);
  expect(response.body).to.be.an('object');
  expect(response.body.error, response.text).to.equal(error);
  expect(response.body.message).to.be.a('string').and.not.equal('');
}

describe('POST /v1/session/{id}/terminate (D7, contract 3.3)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const launch = async (operator: TestOperator): Promise<string> => {
    const response = await operator.launch();
    expect(response.status, response.text).to.equal(200);
    return response.body.sessionId as string;
  };
  const sessionRow = (id: string) => h.svc.db.session.findUniqueOrThrow({ where: { id } });
  const seedsOf = (id: string) => h.svc.db.seed.findMany({ where: { sessionId: id } });
  const terminatePath = (id: string) => `/v1/session/${id}/terminate`;

  it('200 {sessionId, terminatedAt, voidedRoundIds: []}; the session is TERMINATED with the reason and its seed retired', async () => {
    const operator = await h.onboard();
    const sessionId = await launch(operator);
    expect((await seedsOf(sessionId)).map((s) => s.retiredAt)).to.deep.equal([null]);

    const before = Date.now();
    const response = await operator.request('POST', terminatePath(sessionId), { reason: 'responsible_gambling_intervention' });
    const after = Date.now();
    expect(response.status, response.text).to.equal(200);
    expect(response.body).to.have.all.keys('sessionId', 'terminatedAt', 'voidedRoundIds');
    expect(response.body.sessionId).to.equal(sessionId);
    expect(response.body.voidedRoundIds).to.deep.equal([]);
    expect(response.body.terminatedAt).to.match(ISO);
    const terminatedAt = Date.parse(response.body.terminatedAt);
    expect(terminatedAt).to.be.within(before - 1000, after + 1000);

    const row = await sessionRow(sessionId);
    expect(row.state).to.equal('TERMINATED');
    expect(row.terminatedAt?.toISOString()).to.equal(response.body.terminatedAt);
    expect(row.endReason).to.equal('responsible_gambling_intervention');
    const seeds = await seedsOf(sessionId);
    expect(seeds).to.have.length(1);
    expect(seeds[0]!.retiredAt).to.be.an.instanceOf(Date);
    expect(seeds[0]!.retiredAt!.getTime()).to.equal(terminatedAt);
  });

  it('accepts an empty body', async () => {
    const operator = await h.onboard();
    const sessionId = await launch(operator);
    const response = await operator.request('POST', terminatePath(sessionId));
    expect(response.status, response.text).to.equal(200);
    expect(response.body).to.include({ sessionId });
    expect(response.body.voidedRoundIds).to.deep.equal([]);
    const row = await sessionRow(sessionId);
    expect(row.state).to.equal('TERMINATED');
    expect(row.terminatedAt).to.be.an.instanceOf(Date);
    expect((await seedsOf(sessionId)).every((s) => s.retiredAt !== null)).to.equal(true);
  });

  it('a second terminate is 409 session_not_active and changes nothing', async () => {
    const operator = await h.onboard();
    const sessionId = await launch(operator);
    const first = await operator.request('POST', terminatePath(sessionId), { reason: 'first' });
    expect(first.status, first.text).to.equal(200);
    const rowAfterFirst = await sessionRow(sessionId);

    const second = await operator.request('POST', terminatePath(sessionId), { reason: 'second' });
    expectError(second, 409, 'session_not_active');
    const row = await sessionRow(sessionId);
    expect(row.state).to.equal('TERMINATED');
    expect(row.terminatedAt?.getTime()).to.equal(rowAfterFirst.terminatedAt?.getTime());
    expect(row.endReason).to.equal('first');
  });

  it("another operator's session is 404 not_found and stays ACTIVE", async () => {
    const owner = await h.onboard();
    const stranger = await h.onboard();
    const sessionId = await launch(owner);

    const response = await stranger.request('POST', terminatePath(sessionId), { reason: 'not mine' });
    expectError(response, 404, 'not_found');
    const row = await sessionRow(sessionId);
    expect(row).to.include({ state: 'ACTIVE', terminatedAt: null, endReason: null });
    expect((await seedsOf(sessionId)).map((s) => s.retiredAt)).to.deep.equal([null]);

    // the owner still can
    const own = await owner.request('POST', terminatePath(sessionId), {});
    expect(own.status, own.text).to.equal(200);
  });

  it('404 not_found for an unknown uuid and for an id that is not a uuid', async () => {
    const operator = await h.onboard();
    expectError(await operator.request('POST', terminatePath(randomUUID()), {}), 404, 'not_found');
    expectError(await operator.request('POST', terminatePath('not-a-uuid'), {}), 404, 'not_found');
    expectError(await operator.request('POST', terminatePath('12345'), { reason: 'x' }), 404, 'not_found');
  });

  it('an expired session is 409 session_not_active; the row becomes EXPIRED and its seed retired', async () => {
    const operator = await h.onboard();
    const sessionId = await launch(operator);
    const shift = 61 * 60 * 1000;
    h.shiftClock(shift);
    try {
      const shiftedNow = Math.floor(h.svc.now().getTime() / 1000);
      const response = await operator.request('POST', terminatePath(sessionId), { reason: 'too late' }, { timestamp: shiftedNow });
      expectError(response, 409, 'session_not_active');
    } finally {
      h.shiftClock(-shift);
    }
    const row = await sessionRow(sessionId);
    expect(row.state).to.equal('EXPIRED');
    expect(row.terminatedAt).to.equal(null);
    const seeds = await seedsOf(sessionId);
    expect(seeds).to.have.length(1);
    expect(seeds[0]!.retiredAt).to.be.an.instanceOf(Date);
    // revealable no earlier than the session's end
    expect(seeds[0]!.retiredAt!.getTime()).to.be.at.least(row.expiresAt.getTime());
  });

  for (const [label, body, path] of [
    ['{reason: 5}', { reason: 5 }, '/reason'],
    ['{reason: null}', { reason: null }, '/reason'],
    ['{requestUuid: "nope"}', { requestUuid: 'nope' }, '/requestUuid'],
  ] as const) {
    it(`an invalid body (${label}) is 400 invalid_request RS_ERROR_WRONG_TYPES and changes nothing`, async () => {
      const operator = await h.onboard();
      const sessionId = await launch(operator);
      const response = await operator.request('POST', terminatePath(sessionId), body);
      expectError(response, 400, 'invalid_request');
      expect(response.body.status).to.equal('RS_ERROR_WRONG_TYPES');
      expect(response.body.details).to.be.an('array').that.is.not.empty;
      expect(JSON.stringify(response.body.details)).to.include(path);

      const row = await sessionRow(sessionId);
      expect(row).to.include({ state: 'ACTIVE', terminatedAt: null, endReason: null });
      expect((await seedsOf(sessionId)).map((s) => s.retiredAt)).to.deep.equal([null]);
    });
  }
});
