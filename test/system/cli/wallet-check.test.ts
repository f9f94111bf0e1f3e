import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { WALLET_CHECKS, type WalletCheckName } from '../../../src/shared/domain/wallet-conformance.js';
import { BROKEN_RULES, WalletSimulator, type BrokenRule, type WalletFault } from '../../../src/simulator/wallet-simulator.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// `rgs wallet-check` (D38) as an integrator runs it, a subprocess with no database or Redis
// (their URLs point at nothing), against the project's wallet simulator: as it is, every
// check passes and the player's balance is back where it was with only the listed
// movements in the ledger; with each rule of the contract broken in turn, the check of that
// rule fails and the run exits 1. Its free bets (contract 2.6, 8.4; D42) are booked by the
// simulator without moving money, so the ledger entries that moved money are what it lists.

const KID = 'wallet-kid-check';
const SECRET = randomBytes(64).toString('hex');
const OPERATOR = 'op-wallet-check';
const PLAYER = 'rgs-wallet-check';
const START = 1_000_000n;

// the check each broken rule must fail (BROKEN_RULES: one per check)
const CAUGHT_BY: Record<BrokenRule, WalletCheckName> = {
  accepts_bad_signature: 'signature-refused',
  idempotency_ignored: 'bet-idempotent-request',
  duplicate_transaction_debits: 'bet-duplicate-transaction',
  win_ignores_reference: 'win-with-reference',
  rollback_does_not_refund: 'rollback-known',
  rollback_unknown_refused: 'rollback-unknown',
  no_tombstones: 'debit-after-rollback',
  overdraws: 'not-enough-money',
  free_bet_debits_cash: 'free-bet',
  numeric_amounts: 'amounts-as-strings',
  no_request_uuid_echo: 'request-uuid-echo',
};

type Report = {
  passed: boolean;
  checks: { name: string; passed: boolean; detail: string }[];
  moved: { endpoint: string; transactionUuid: string; direction: 'debit' | 'credit'; amountMicro: string }[];
  latencyMs: { p50: number; p99: number; calls: number; objectives: { endpoint: string; objectiveP99Ms: number }[] };
  balanceMicro: { start: string | null; end: string | null };
  stopped?: string;
};

const NOWHERE = { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/nowhere', REDIS_URL: 'redis://127.0.0.1:1' };

describe('rgs wallet-check (D38)', function () {
  this.timeout(120_000);
  let simulator: WalletSimulator;

  // the ledger entries that changed the player's balance (a free bet, its win of "0" and its
  // rollback are booked and move nothing)
  const moving = () => {
    let last = START;
    return simulator.transactions.filter((entry) => {
      const moved = entry.balanceAfterMicro !== last;
      last = entry.balanceAfterMicro;
      return moved;
    });
  };

  before(async () => {
    simulator = await WalletSimulator.start();
  });
  after(() => simulator.close());
  beforeEach(() => {
    simulator.reset();
    simulator.addCredential(KID, SECRET);
    simulator.setBalance(PLAYER, 'EUR', START);
  });

  const check = (extra: string[] = [], url = simulator.url) =>
    runRgs(['wallet-check', '--url', url, '--kid', KID, '--secret', SECRET, '--operator', OPERATOR, ...extra], { env: NOWHERE, timeoutMs: 60_000 });

  function report(result: CliResult, code: 0 | 1): Report {
    expect(result.code, `${result.stderr}${result.stdout}`).to.equal(code);
    expect(result.stderr).to.equal('');
    const body = JSON.parse(result.stdout) as Report;
    expect(body.passed).to.equal(code === 0);
    expect(body.checks.map((c) => c.name)).to.deep.equal([...WALLET_CHECKS]);
    return body;
  }
  const failed = (body: Report) => body.checks.filter((c) => !c.passed).map((c) => c.name);

  it('a conforming wallet passes every check; the balance is back and the ledger holds only the listed movements', async () => {
    const body = report(await check(['--json']), 0);
    expect(failed(body)).to.deep.equal([]);
    expect(body.balanceMicro).to.deep.equal({ start: START.toString(), end: START.toString() });
    expect(simulator.balanceOf(PLAYER, 'EUR')).to.equal(START);
    // what the check says it moved is exactly what the wallet booked
    expect(body.moved.map((m) => `${m.endpoint} ${m.transactionUuid} ${m.amountMicro}`)).to.deep.equal(
      moving().map((entry) => `${entry.type} ${entry.transactionUuid} ${entry.amountMicro}`),
    );
    // D42: two free bets, isFree with the check's bonusRef, booked without moving money; the
    // first one's win of "0", the second one's rollback
    const free = simulator.requests.map((request) => request.body as Record<string, unknown>).filter((b) => b.isFree === true);
    expect(free.map((b) => [b.bonusRef, b.amountMicro])).to.deep.equal([
      ['rgs-wallet-check', '10000'],
      ['rgs-wallet-check', '10000'],
    ]);
    const freeUuids = free.map((b) => b.transactionUuid);
    const following = simulator.requests
      .map((request) => ({ path: request.path, body: request.body as Record<string, unknown> }))
      .filter(({ body: b }) => freeUuids.includes(b.referenceTransactionUuid));
    expect(following.map(({ path, body: b }) => `${path} ${String(b.amountMicro)}`)).to.deep.equal(['/wallet/win 0', '/wallet/rollback undefined']);
    expect(body.moved.map((m) => `${m.endpoint} ${m.direction} ${m.amountMicro}`)).to.deep.equal([
      'bet debit 10000',
      'win credit 10000',
      'bet debit 10000',
      'rollback credit 10000',
    ]);
    // the operator id in every body; the only request the simulator objects to is the one signed wrongly on purpose
    const bodies = simulator.requests.map((request) => request.body as { operatorId?: string; playerRef?: string; currency?: string });
    expect(bodies.every((b) => b.operatorId === OPERATOR && b.playerRef === PLAYER && b.currency === 'EUR')).to.equal(true);
    expect(simulator.violations).to.deep.equal(['POST /wallet/bet: signature mismatch']);
    expect(body.latencyMs.calls).to.equal(simulator.requests.length);
    expect(body.latencyMs.p50).to.be.a('number');
    expect(body.latencyMs.p99).to.be.a('number');
    expect(body.latencyMs.objectives.map((o) => `${o.endpoint} ${o.objectiveP99Ms}`)).to.deep.equal(['bet 300', 'balance 200']);
  });

  it('prints a table without --json: each check, the money moved, the balance and the latency', async () => {
    const result = await check();
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.equal('');
    for (const name of WALLET_CHECKS) expect(result.stdout).to.match(new RegExp(`^${name} +pass +\\S`, 'm'));
    expect(result.stdout).to.include('Money moved (4 calls)').and.include(`Balance: ${START} at the start, ${START} at the end`);
    expect(result.stdout).to.match(/^Latency over \d+ answered calls: p50 \d+ ms, p99 \d+ ms$/m);
    expect(result.stdout).to.include('objective under 300 ms (contract 8.5)');
    expect(result.stdout.trimEnd().split('\n').at(-1)).to.equal('PASSED: all 13 checks');
  });

  it('takes --player and --currency', async () => {
    simulator.setBalance('player-btc', 'BTC', 50_000n);
    const body = report(await check(['--player', 'player-btc', '--currency', 'BTC', '--json']), 0);
    expect(body.balanceMicro.start).to.equal('50000');
    expect(simulator.balanceOf('player-btc', 'BTC')).to.equal(50_000n);
    expect(simulator.transactions.every((entry) => entry.playerRef === 'player-btc' && entry.currency === 'BTC')).to.equal(true);
  });

  for (const rule of BROKEN_RULES) {
    it(`a wallet that breaks ${rule} fails ${CAUGHT_BY[rule]}, exit 1`, async () => {
      simulator.breakRule(rule);
      const body = report(await check(['--json']), 1);
      expect(failed(body)).to.include(CAUGHT_BY[rule]);
      const detail = body.checks.find((c) => c.name === CAUGHT_BY[rule])!.detail;
      expect(detail).not.to.match(/^not run/);
      // the check gave back whatever the broken wallet kept, unless what is broken is the refund itself
      if (rule !== 'rollback_does_not_refund') expect(simulator.balanceOf(PLAYER, 'EUR'), rule).to.equal(START);
      // every movement the wallet booked is listed
      expect(body.moved.length, rule).to.equal(moving().length);
    });
  }

  // contract 5.2, D13: the refusal of a bad signature is RS_ERROR_INVALID_SIGNATURE with a 2xx
  // or a 4xx; anything else fails the check even when no money moved (the next bet call of
  // the run is the wrongly signed one, so a fault for one call answers it)
  const refusals: [string, WalletFault, boolean][] = [
    ['200 RS_OK', { kind: 'status', status: 'RS_OK' }, false],
    ['500 RS_ERROR_INVALID_SIGNATURE', { kind: 'status', status: 'RS_ERROR_INVALID_SIGNATURE', httpStatus: 500 }, false],
    ['500 with an HTML page', { kind: 'http', httpStatus: 500 }, false],
    ['403 RS_ERROR_INVALID_SIGNATURE', { kind: 'status', status: 'RS_ERROR_INVALID_SIGNATURE', httpStatus: 403 }, true],
  ];
  for (const [answer, fault, passes] of refusals) {
    it(`a wallet that answers a bad signature ${answer} ${passes ? 'passes' : 'fails'} signature-refused`, async () => {
      simulator.setFault('bet', fault, 1);
      const body = report(await check(['--json']), passes ? 0 : 1);
      expect(failed(body)).to.deep.equal(passes ? [] : ['signature-refused']);
      expect(simulator.balanceOf(PLAYER, 'EUR')).to.equal(START);
    });
  }

  it('a rollback that refunds nothing also fails balance-restored, naming the difference; the table exits 1', async () => {
    simulator.breakRule('rollback_does_not_refund');
    const result = await check();
    expect(result.code, result.stderr).to.equal(1);
    expect(result.stdout).to.match(/^rollback-known +FAIL +/m);
    expect(result.stdout).to.match(/^balance-restored +FAIL +the balance was 1000000 at the start and 990000 at the end \(-10000\)/m);
    expect(result.stdout.trimEnd().split('\n').at(-1)).to.equal('FAILED: 2 of 13 checks');
  });

  // contract 2.6, 8.4, D42: a wallet that takes a free bet's stake in cash
  it('a wallet that debits cash for a free bet fails free-bet and free-bet-rollback, naming the debit; the stake is given back', async () => {
    simulator.breakRule('free_bet_debits_cash');
    const body = report(await check(['--json']), 1);
    expect(failed(body)).to.deep.equal(['free-bet', 'free-bet-rollback']);
    const detail = (name: string) => body.checks.find((c) => c.name === name)!.detail;
    expect(detail('free-bet')).to.match(/^a free bet of 10000 \(isFree: true, bonusRef\) was answered RS_OK and debited 10000; its win of "0" was answered RS_OK and moved no money; contract 2\.6, 8\.4 \(D42\): .*debit no cash/);
    expect(detail('free-bet-rollback')).to.match(/^a second free bet of 10000 was answered RS_OK and debited 10000; its rollback was answered RS_OK and credited 10000; /);
    // the free bet the wallet kept in cash is rolled back at the end
    expect(body.balanceMicro).to.deep.equal({ start: START.toString(), end: START.toString() });
    expect(simulator.balanceOf(PLAYER, 'EUR')).to.equal(START);
    const table = await check();
    expect(table.stdout).to.match(/^free-bet +FAIL +a free bet of 10000/m);
  });

  it('a balance too low for the checks fails clearly and moves nothing', async () => {
    simulator.setBalance(PLAYER, 'EUR', 20_000n);
    const body = report(await check(['--json']), 1);
    expect(body.stopped).to.include('20000').and.include('at least 30000');
    expect(body.moved).to.deep.equal([]);
    expect(simulator.transactions).to.deep.equal([]);
    expect(body.checks.find((c) => c.name === 'not-enough-money')!.detail).to.match(/^not run: the player's balance is 20000/);
  });

  it('an unreachable wallet fails clearly: every check not run, the reason, no stack trace', async () => {
    const json = report(await check(['--json'], 'http://127.0.0.1:1'), 1);
    expect(json.stopped).to.equal('the balance call got no answer (network error: connect ECONNREFUSED 127.0.0.1:1)');
    expect(json.checks.every((c) => !c.passed && c.detail.startsWith('not run: '))).to.equal(true);
    const table = await check([], 'http://127.0.0.1:1');
    expect(table.code).to.equal(1);
    expect(table.stderr).to.equal('');
    expect(table.stdout).to.include(`Stopped: ${json.stopped}\n`);
    expect(`${table.stdout}${json.stopped}`).not.to.match(/\n\s+at /);
  });

  it('a command line it cannot use is a usage error: exit 2, one line and a hint', async () => {
    const [noUrl, notUrl, badCurrency] = await Promise.all([
      runRgs(['wallet-check', '--kid', KID, '--secret', SECRET, '--operator', OPERATOR], { env: NOWHERE }),
      check([], 'ftp://wallet.example.com'),
      check(['--currency', 'eur']),
    ]);
    for (const [result, message] of [
      [noUrl, "rgs wallet-check: required option '--url <url>' not specified"],
      [notUrl, 'rgs wallet-check: --url must be an http: or https: URL'],
      [badCurrency, 'rgs wallet-check: --currency must be 3 to 10 of A-Z 0-9 (contract 2.1)'],
    ] as const) {
      expect(result.code, result.stderr).to.equal(2);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.equal(`${message}\nRun 'rgs wallet-check --help' for usage.\n`);
    }
    expect(simulator.requests).to.deep.equal([]);
  });
});
