import { expect } from 'chai';
import type { WalletCall } from '../../../src/shared/platform/db/client.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import type { RecordedRequest, WalletFault } from '../../../src/simulator/wallet-simulator.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { seatPlayer, until } from '../../support/game.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// D24: every answer from a wallet is untrusted in size, shape and time. An answer over 64 KiB
// is cut off (refused at once on its content-length, else when the bytes received pass the
// cap) and taken as RS_ERROR_UNKNOWN, so a debit behind it is rolled back (contract 7.1,
// D13); the timeout covers the whole answer, body included; a string from the wallet is
// truncated to 256 characters before it is logged or stored. Through the real flow: a player
// bets, the bet worker debits, the rollback worker reverses; the wallet simulator answers.

const START = 5_000_000n;
const STAKE = 1_000_000n;
const CAP = 64 * 1024;

describe('hostile wallet answers (D24)', function () {
  this.timeout(30_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h?.close());
  const restores: (() => void)[] = [];
  afterEach(() => {
    for (const endpoint of ['balance', 'bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
    for (const restore of restores.splice(0)) restore();
  });

  // HIGH always rolls and the player bets LOW: an accepted bet would settle without a win call
  async function seated() {
    const operator: TestOperator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 3000, rollingWindowMs: 200, cooldownMs: 200, lowWeight: 0n, highWeight: 1n });
    const seat = await seatPlayer(h, operator, START);
    await seat.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    return { operator, ...seat };
  }

  const requestsTo = (endpoint: 'bet' | 'rollback', field: 'transactionUuid' | 'referenceTransactionUuid', value: string) =>
    h.wallet.requests.filter((r) => r.endpoint === endpoint && (r.body as Record<string, unknown> | undefined)?.[field] === value);
  const responseOf = (r: RecordedRequest | undefined) => (r && typeof r.response === 'object' ? r.response : undefined);
  const ledgerOf = (playerRef: string) => h.wallet.transactions.filter((t) => t.playerRef === playerRef).map((t) => [t.type, t.amountMicro] as const);
  // everything the audit row stores, as text
  const storedSize = (row: WalletCall) => Object.values(row).reduce<number>((size, value) => size + (typeof value === 'string' ? value.length : 8), 0);

  // what the service logs at warn level while a test runs
  function warnings() {
    const logger = h.svc.logger;
    const original = logger.warn;
    const seen: Record<string, unknown>[] = [];
    logger.warn = function (this: unknown, ...args: unknown[]) {
      if (args[0] && typeof args[0] === 'object') seen.push(args[0] as Record<string, unknown>);
      return (original as (...a: unknown[]) => void).apply(this, args);
    } as typeof logger.warn;
    restores.push(() => void (logger.warn = original));
    return seen;
  }

  // A debit answered by `fault`: the bet is REJECTED as uncertain, the debit rolled back, the
  // player's balance whole again. debited: the wallet applied the debit before answering.
  async function uncertainDebit(fault: WalletFault, reason: string, audit: { status: string; error: RegExp }, debited = true) {
    const { player, playerRef, sessionId } = await seated();
    h.wallet.setFault('bet', fault, 1);
    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() }, 8000);
    expect(ack).to.deep.equal({ ok: false, reason });
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId } });
    expect(bet).to.include({ status: 'REJECTED', rejectReason: reason });
    expect(await player.waitFor('bet_rejected')).to.include({ reason });

    const [call] = await h.svc.db.walletCall.findMany({ where: { transactionUuid: bet.betTransactionUuid } });
    expect(call).to.include({ endpoint: 'bet', status: audit.status });
    expect(call!.error).to.match(audit.error);
    expect(storedSize(call!), 'the audit row holds no more than the cap').to.be.below(CAP);

    // 7.1: uncertain, so rolled back with the bet's transactionUuid; an applied debit is
    // refunded, one never booked is unknown to the wallet (4.2 rule 4)
    const job = await until('the rollback job', () => h.svc.db.walletJob.findFirst({ where: { betId: bet.id, endpoint: 'rollback', completedAt: { not: null } } }));
    expect(job).to.include({ purpose: 'uncertain_bet', attempts: 1 });
    const rollback = responseOf(requestsTo('rollback', 'referenceTransactionUuid', bet.betTransactionUuid)[0]);
    expect(rollback?.status).to.equal(debited ? 'RS_OK' : 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
    expect(ledgerOf(playerRef)).to.deep.equal(debited ? [['bet', STAKE], ['rollback', STAKE]] : []);
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START);
    expect(h.wallet.violations).to.deep.equal([]);
    player.close();
    return { call: call!, sent: responseOf(requestsTo('bet', 'transactionUuid', bet.betTransactionUuid)[0]) };
  }

  it('a 1 MB answer with its content-length: refused on the header, RS_ERROR_UNKNOWN, the debit rolled back', async () => {
    const { call } = await uncertainDebit({ kind: 'oversize', bytes: 1024 * 1024 }, 'wallet_rejected:RS_ERROR_UNKNOWN', {
      status: 'RS_ERROR_UNKNOWN',
      error: /^answer of 10485\d\d bytes \(content-length\) over the 65536-byte cap$/,
    });
    expect(call.httpStatus).to.equal(200);
  });

  // D13: a 4xx answer is read for its status, but within the same cap (D24)
  it('a 1 MB answer with HTTP 401: refused on the header like a 200, RS_ERROR_UNKNOWN, the debit rolled back', async () => {
    const { call } = await uncertainDebit({ kind: 'oversize', bytes: 1024 * 1024, httpStatus: 401 }, 'wallet_rejected:RS_ERROR_UNKNOWN', {
      status: 'RS_ERROR_UNKNOWN',
      error: /^answer of 10485\d\d bytes \(content-length\) over the 65536-byte cap$/,
    });
    expect(call.httpStatus).to.equal(401);
  });

  it('an endless chunked answer: cut off at the cap before the timeout, RS_ERROR_UNKNOWN, the debit rolled back', async () => {
    const { call, sent } = await uncertainDebit({ kind: 'endless' }, 'wallet_rejected:RS_ERROR_UNKNOWN', {
      // not RS_ERROR_TIMEOUT: the call ended on the cap, not on the clock
      status: 'RS_ERROR_UNKNOWN',
      error: /^answer over the 65536-byte cap: cut off after \d+ bytes$/,
    });
    // what the service read before it cut the answer off: past the cap by at most one read
    const received = Number(/after (\d+) bytes/.exec(call.error!)![1]);
    expect(received).to.be.above(CAP).and.at.most(2 * CAP);
    // the wallet did start an answer far larger than that (it writes until the connection closes)
    expect(sent?.bytesSent).to.be.above(received - 1);
  });

  it('an answer trickling in byte by byte: the timeout covers the body, wallet_timeout, the debit rolled back', async () => {
    const { call, sent } = await uncertainDebit({ kind: 'trickle', intervalMs: 50 }, 'wallet_timeout', {
      status: 'RS_ERROR_TIMEOUT',
      error: /^no answer within 1000 ms$/,
    });
    expect(call.httpStatus).to.equal(null);
    // the headers and part of the body had gone out, the rest never did
    expect(sent?.bytesSent).to.be.above(0);
    expect(sent?.body).to.not.match(/}$/);
  });

  it('a 10 KB status string is stored and logged truncated to 256 characters', async () => {
    const warned = warnings();
    const status = `RS_${'Z'.repeat(10_000)}`;
    const { call } = await uncertainDebit({ kind: 'status', status }, 'wallet_rejected:RS_ERROR_UNKNOWN', { status: 'RS_ERROR_UNKNOWN', error: /^unknown status "RS_Z+"$/ }, false);
    const shown = status.slice(0, 256);
    expect(call.error).to.equal(`unknown status "${shown}"`);
    const logged = warned.find((w) => w.requestUuid === call.requestUuid);
    expect(logged, 'the uncertain call is logged').to.not.equal(undefined);
    expect(logged!.error).to.equal(`unknown status "${shown}"`);
  });

  it('a 10 KB message is handed on truncated to 256 characters', async () => {
    const operator = await h.onboard();
    h.wallet.setFault('balance', { kind: 'status', status: 'RS_ERROR_USER_DISABLED', message: 'm'.repeat(10_000) }, 1);
    const result = await h.svc.wallet.call({
      operatorId: operator.operatorId,
      endpoint: 'balance',
      fields: { operatorId: operator.operatorId, playerRef: 'p-1', currency: 'EUR', gameCode: 'dice' },
    });
    expect(result.status).to.equal('RS_ERROR_USER_DISABLED');
    expect(result.message?.length).to.equal(256);
    expect(result.message).to.match(/^m+$/);
  });
});
