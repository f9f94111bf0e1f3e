import { expect } from 'chai';
import fc from 'fast-check';
import { inspect } from 'node:util';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, seatPlayer, tick, until, type SeatedPlayer } from '../../support/game.js';
import type { Player } from '../../support/player.js';

// D4, D24, D28 as a property: whatever a player sends as place_bet (any JSON value, hostile
// strings, huge numbers, NUL, nested objects, extra fields, amounts around 2^63), the answer
// is a contract ack, the socket keeps serving, invalid input never reaches the wallet, and
// the honest bets of other sessions placed at the same moment are all accepted.

// the refusals a place_bet may be answered with (contract 8.2, D4, D28)
const REASONS = new Set([
  'bet_out_of_range',
  'session_not_found',
  'session_terminated',
  'session_expired',
  'phase_not_open',
  'already_bet_this_round',
  'rg_limit_reached',
  'wallet_timeout',
  'invalid_payload',
  'rate_limited',
  'service_unavailable',
]);
const isContractAck = (ack: unknown): boolean => {
  if (ack === null || typeof ack !== 'object') return false;
  const { ok, reason, betId, roundId } = ack as Record<string, unknown>;
  if (ok === true) return typeof betId === 'string' && typeof roundId === 'string';
  return ok === false && typeof reason === 'string' && (REASONS.has(reason) || /^wallet_rejected:RS_[A-Z_]+$/.test(reason));
};

// An oracle written from D4 and D24 alone: is the payload, as the service receives it (JSON),
// a well-formed place_bet?
const MAX_BIGINT = 2n ** 63n - 1n;
function wellFormed(sent: unknown): boolean {
  if (sent === undefined) return false;
  const payload: unknown = JSON.parse(JSON.stringify(sent) ?? 'null');
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return false;
  const fields = payload as Record<string, unknown>;
  if (Object.keys(fields).some((k) => !['side', 'amountMicro', 'clientBetId'].includes(k))) return false;
  if (fields.side !== 'LOW' && fields.side !== 'HIGH') return false;
  const amount = fields.amountMicro;
  const amountOk =
    typeof amount === 'number'
      ? Number.isSafeInteger(amount) && amount >= 0
      : typeof amount === 'string' && /^(0|[1-9][0-9]{0,18})$/.test(amount) && BigInt(amount) <= MAX_BIGINT;
  if (!amountOk) return false;
  const id = fields.clientBetId;
  return id === undefined || id === null || (typeof id === 'string' && id.length >= 1 && id.length <= 64 && !/[\u0000\uD800-\uDFFF]/u.test(id));
}

const hostileStrings = fc.constantFrom(
  '',
  ' 1',
  '1 ',
  '1\u0000',
  '\u0000',
  'di\u0000ce',
  '１２',
  '1e3',
  '0x10',
  '1_000',
  '-1',
  '+1',
  '0',
  '00',
  '0100',
  '1.0',
  '\uD800',
  '\u202E1',
  'NaN',
  'Infinity',
  '__proto__',
  'constructor',
  '9223372036854775807',
  '9223372036854775808',
  '99999999999999999999',
  '1'.repeat(400),
);
const amounts = fc.oneof(
  fc.bigInt({ min: MAX_BIGINT - 3n, max: MAX_BIGINT + 3n }).map(String),
  fc.bigInt({ min: -5n, max: 10n ** 22n }).map(String),
  fc.bigInt({ min: 1n, max: 10_000_000n }).map(String),
  fc.integer({ min: -1_000, max: 10_000_000 }),
  fc.double(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 2 ** 63, 1e21, -0, 0.5, true, null),
  hostileStrings,
  fc.string({ maxLength: 40 }),
  fc.jsonValue({ maxDepth: 2 }),
);
const sides = fc.oneof(fc.constantFrom('LOW', 'HIGH', 'low', 'LOW\u0000', ' LOW', ''), fc.jsonValue({ maxDepth: 1 }));
const clientBetIds = fc.oneof(fc.string({ maxLength: 70 }), hostileStrings, fc.jsonValue({ maxDepth: 1 }));
// mostly well-formed: the edge's boundaries (2^63, 20 digits, zero, the safe integers)
const nearlyValid = fc.record(
  {
    side: fc.constantFrom('LOW', 'HIGH'),
    amountMicro: fc.oneof(
      fc.bigInt({ min: 1n, max: 10_000_000n }).map(String),
      fc.integer({ min: 1, max: 10_000_000 }),
      fc.bigInt({ min: MAX_BIGINT - 3n, max: MAX_BIGINT + 3n }).map(String),
      fc.constantFrom('99999999999999999999', '10000000000000000000', '0', '100', 100, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1),
    ),
    clientBetId: fc.string({ maxLength: 70 }),
  },
  { requiredKeys: ['side', 'amountMicro'] },
);
const placeBetPayloads = fc.oneof(
  { weight: 4, arbitrary: nearlyValid },
  { weight: 4, arbitrary: fc.record({ side: sides, amountMicro: amounts, clientBetId: clientBetIds }, { requiredKeys: [] }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.record({ side: sides, amountMicro: amounts }), fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }))
      .map(([bet, extra]) => ({ ...extra, ...bet })),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, 'LOW 1000000', ['LOW', '1000000'], 42, { side: { side: 'LOW' }, amountMicro: { amountMicro: '1' } }) },
);

describe('place_bet over any payload (property, D4, D24, D28)', function () {
  this.timeout(120_000);
  const RUNS = 40;
  let h: Harness;
  const players: Player[] = [];
  // this test's operators: the workers also pick up jobs that earlier suites of this run left
  // in the shared queues, whose errors are theirs
  const operatorIds = new Set<string>();

  before(async () => {
    // the tables' players launch together, each with a balance call; under a loaded CI box
    // the harness's 1 s wallet timeout failed a launch, which this property is not about
    h = await startHarness({ WALLET_CALL_TIMEOUT_MS: '5000' }, ROLES_WITHOUT_CLOCK);
  });
  after(async () => {
    for (const player of players.splice(0)) player.close();
    await h.close();
  });

  // an operator whose betting window the test opened and keeps open (no clock runs), with
  // `count` funded players seated (launches: a burst of 10 per operator, contract 8.1)
  async function openTable(count: number): Promise<SeatedPlayer[]> {
    const operator = await operatorWith(h, { bettingWindowMs: 600_000, minBetMicro: 100n, maxBetMicro: 5_000_000n });
    operatorIds.add(operator.operatorId);
    const seats = await Promise.all(Array.from({ length: count }, () => seatPlayer(h, operator, 1_000_000_000n)));
    for (const seat of seats) players.push(seat.player);
    const engine = { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' };
    const pending = await until('the cycle', () => currentCycle(h.svc, engine));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    return seats;
  }

  it('answers every payload with a contract ack, calls no wallet for invalid input, and refuses no honest bet', async () => {
    // hostile sessions take turns, so that the throttle (a budget per socket) refuses only
    // some; one honest bet per session and cycle (8.2 rule 4): a fresh honest session for
    // each run, of the hostile players' operator and of others
    const [hostileTable, ...otherTables] = await Promise.all([openTable(10), ...Array.from({ length: Math.ceil((RUNS - 4) / 10) }, () => openTable(10))]);
    const hostile = hostileTable!.slice(0, 6);
    const honest = [...hostileTable!.slice(6), ...otherTables.flat()];
    const betCallsOf = (playerRef: string) =>
      h.wallet.requests.filter((r) => r.endpoint === 'bet' && (r.body as { playerRef?: unknown } | undefined)?.playerRef === playerRef).length;

    const errors: unknown[][] = [];
    const original = h.svc.logger.error;
    h.svc.logger.error = function (this: unknown, ...args: unknown[]) {
      const about = (args[0] as { operatorId?: unknown } | undefined)?.operatorId;
      if (typeof about !== 'string' || operatorIds.has(about)) errors.push(args);
      return (original as (...a: unknown[]) => void).apply(this, args);
    } as typeof original;

    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(placeBetPayloads, async (payload) => {
          const attacker = hostile[run % hostile.length]!;
          const bystander = honest[run % honest.length]!;
          run += 1;
          const calls = betCallsOf(attacker.playerRef);
          const [ack, honestAck] = await Promise.all([
            attacker.player.socket.timeout(10_000).emitWithAck('place_bet', payload),
            bystander.player.request('place_bet', { side: run % 2 ? 'LOW' : 'HIGH', amountMicro: '1000000', clientBetId: `honest-${run}` }),
          ]);
          const what = inspect(payload, { depth: 4 });
          expect(isContractAck(ack), `ack ${inspect(ack)} of ${what}`).to.equal(true);
          expect(honestAck.ok, `honest bet beside ${what}: ${inspect(honestAck)}`).to.equal(true);
          if (!wellFormed(payload)) {
            expect(['invalid_payload', 'rate_limited'], `ack ${inspect(ack)} of ${what}`).to.include(ack.reason);
            expect(betCallsOf(attacker.playerRef), `wallet calls after ${what}`).to.equal(calls);
          } else {
            expect(ack.reason, `ack of ${what}`).to.not.equal('invalid_payload');
          }
          expect(attacker.player.socket.connected, `socket after ${what}`).to.equal(true);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    } finally {
      h.svc.logger.error = original;
    }
    expect(run).to.be.at.most(honest.length);
    expect(errors, 'error logs').to.deep.equal([]);
    expect(h.wallet.violations).to.deep.equal([]);
  });
});
