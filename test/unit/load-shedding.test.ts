import { expect } from 'chai';
import { shedWhileBusy } from '../../src/api/load-shedding.js';
import { routeErrorCodes } from '../../src/api/openapi.js';

// D37: a process past its load bound refuses the operator calls that start work and serves
// the reads of one record; the API description says which is which, route by route.
describe('load shedding of operator calls (D37)', () => {
  it('serves the reads of one round and a termination, refuses creates, reports, listings, packs and webhook sends', () => {
    const signed = routeErrorCodes().filter((route) => route.signed);
    const served = signed.filter((route) => !route.codes.includes('service_busy')).map((route) => route.route);
    expect(served.sort()).to.deep.equal([
      'GET /v1/rounds/{roundId}',
      'GET /v1/rounds/{roundId}/proof',
      'GET /v1/rounds/{roundId}/replay-url',
      'POST /v1/session/{sessionId}/terminate',
    ]);
    const shed = signed.filter((route) => route.codes.includes('service_busy')).map((route) => route.route);
    expect(shed).to.include.members([
      'POST /v1/session',
      'GET /v1/rounds',
      'GET /v1/reports/ggr',
      'GET /v1/reports/wallet-calls',
      'GET /v1/rounds/{roundId}/dispute-pack',
      'GET /v1/webhooks/deliveries',
      'POST /v1/webhooks/test',
      'POST /v1/webhooks/deliveries/{eventId}/redeliver',
    ]);
  });

  it('refuses a path no route matches, and answers HEAD as its GET', () => {
    expect(shedWhileBusy('GET', undefined)).to.equal(true);
    expect(shedWhileBusy('HEAD', '/v1/rounds/:roundId')).to.equal(false);
    expect(shedWhileBusy('POST', '/v1/rounds/:roundId')).to.equal(true);
  });
});
