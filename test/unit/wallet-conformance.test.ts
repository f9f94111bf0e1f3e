import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { MAX_MICRO } from '../../src/shared/domain/money.js';
import {
  WALLET_CHECKS,
  WALLET_CHECK_MIN_BALANCE_MICRO,
  balanceOf,
  evaluate,
  latencySummary,
  movements,
  overBalanceStake,
  percentile,
  readAnswer,
  reversals,
  startProblem,
  type WalletCheckCall,
  type WalletCheckName,
  type WalletCheckRun,
  type WalletCheckStep,
} from '../../src/shared/domain/wallet-conformance.js';
import type { WalletEndpoint } from '../../src/shared/domain/wallet-status.js';

// The pure rules of `rgs wallet-check` (D38): how an answer is read (contract 2.10, D13),
// what the recorded calls say about each rule (4.2, 4.3, 5.2, D27), which rollbacks give the
// balance back, and the latency percentiles (8.5). test/system/cli/wallet-check.test.ts runs
// the command against the simulator with each rule broken.

const STAKE = 10_000n;
const START = 1_000_000n;

type Answer = { status?: string; httpStatus?: number; balanceMicro?: unknown; echo?: string | null; text?: string };

// one recorded call; by default a 200 answer that echoes the requestUuid
function call(step: WalletCheckStep, endpoint: WalletEndpoint, answer: Answer, extra: Partial<WalletCheckCall> = {}): WalletCheckCall {
  const requestUuid = extra.requestUuid ?? randomUUID();
  const body = {
    status: answer.status ?? 'RS_OK',
    ...(answer.echo === null ? {} : { requestUuid: answer.echo ?? requestUuid }),
    ...(answer.balanceMicro === undefined ? {} : { balanceMicro: answer.balanceMicro }),
  };
  return {
    step,
    endpoint,
    requestUuid,
    outcome: { kind: 'answer', httpStatus: answer.httpStatus ?? 200, text: answer.text ?? JSON.stringify(body) },
    latencyMs: 5,
    ...extra,
  };
}

// A run of a conforming wallet, step by step as the command makes it, each money call
// followed by its balance call; `change` replaces a step's call.
function conformingRun(change: Partial<Record<WalletCheckStep, (c: WalletCheckCall) => WalletCheckCall>> = {}): WalletCheckRun {
  const calls: WalletCheckCall[] = [];
  let balance = START;
  const balanceCall = () => calls.push(call('balance', 'balance', { balanceMicro: balance.toString() }));
  const bet = { transactionUuid: randomUUID(), roundId: randomUUID() };
  const second = { transactionUuid: randomUUID(), roundId: randomUUID() };
  const late = { transactionUuid: randomUUID(), roundId: randomUUID() };
  const money = (made: WalletCheckCall) => {
    const final = change[made.step]?.(made) ?? made;
    calls.push(final);
    balance += final.deltaMicro ?? 0n;
    balanceCall();
  };
  balanceCall();
  money(call('bad-signature', 'bet', { status: 'RS_ERROR_INVALID_SIGNATURE', httpStatus: 401 }, { transactionUuid: randomUUID(), deltaMicro: 0n }));
  const booked = call('bet', 'bet', { balanceMicro: (START - STAKE).toString() }, { ...bet, amountMicro: STAKE, deltaMicro: -STAKE });
  money(booked);
  money(
    call('bet-repeat', 'bet', { balanceMicro: (START - STAKE).toString() }, { ...bet, requestUuid: booked.requestUuid, amountMicro: STAKE, deltaMicro: 0n }),
  );
  money(call('bet-duplicate', 'bet', { status: 'RS_ERROR_DUPLICATE_TRANSACTION' }, { ...bet, amountMicro: STAKE, deltaMicro: 0n }));
  money(
    call('win-unknown', 'win', { status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, { transactionUuid: randomUUID(), referenceTransactionUuid: randomUUID(), deltaMicro: 0n }),
  );
  money(call('win', 'win', {}, { transactionUuid: randomUUID(), referenceTransactionUuid: bet.transactionUuid, roundId: bet.roundId, deltaMicro: STAKE }));
  money(call('bet-2', 'bet', {}, { ...second, amountMicro: STAKE, deltaMicro: -STAKE }));
  money(call('rollback', 'rollback', {}, { transactionUuid: randomUUID(), referenceTransactionUuid: second.transactionUuid, deltaMicro: STAKE }));
  money(
    call('rollback-unknown', 'rollback', { status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, { transactionUuid: randomUUID(), referenceTransactionUuid: late.transactionUuid, deltaMicro: 0n }),
  );
  money(call('bet-after-rollback', 'bet', { status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, { ...late, amountMicro: STAKE, deltaMicro: 0n }));
  money(call('bet-over-balance', 'bet', { status: 'RS_ERROR_NOT_ENOUGH_MONEY' }, { transactionUuid: randomUUID(), amountMicro: START + 1n, deltaMicro: 0n }));
  // D42: free bets move no cash; the first is won "0", the second rolled back
  const free = { transactionUuid: randomUUID(), roundId: randomUUID() };
  const freeAgain = { transactionUuid: randomUUID(), roundId: randomUUID() };
  money(call('free-bet', 'bet', {}, { ...free, amountMicro: STAKE, deltaMicro: 0n }));
  money(call('free-win', 'win', {}, { transactionUuid: randomUUID(), referenceTransactionUuid: free.transactionUuid, roundId: free.roundId, amountMicro: 0n, deltaMicro: 0n }));
  money(call('free-bet-2', 'bet', {}, { ...freeAgain, amountMicro: STAKE, deltaMicro: 0n }));
  money(call('free-rollback', 'rollback', {}, { transactionUuid: randomUUID(), referenceTransactionUuid: freeAgain.transactionUuid, roundId: freeAgain.roundId, deltaMicro: 0n }));
  return { stakeMicro: STAKE, calls, startBalanceMicro: START, endBalanceMicro: balance };
}

// the call answered otherwise (echoing its requestUuid unless told)
const answered = (c: WalletCheckCall, answer: Answer, extra: Partial<WalletCheckCall> = {}): WalletCheckCall => ({
  ...c,
  outcome: call(c.step, c.endpoint, { echo: c.requestUuid, ...answer }).outcome,
  ...extra,
});

const failing = (run: WalletCheckRun): WalletCheckName[] => evaluate(run).filter((check) => !check.passed).map((check) => check.name);
const detailOf = (run: WalletCheckRun, name: WalletCheckName): string => evaluate(run).find((check) => check.name === name)!.detail;

describe('wallet conformance check, pure rules (D38)', () => {
  describe('reading an answer (contract 2.10, D13)', () => {
    it('takes a 2xx JSON object with a known status at its word', () => {
      expect(readAnswer({ kind: 'answer', httpStatus: 200, text: '{"status":"RS_OK","requestUuid":"x"}' })).to.include({
        serviceStatus: 'RS_OK',
        status: 'RS_OK',
      });
    });

    it('takes a 4xx refusal at its word, as the service does', () => {
      const answer = readAnswer({ kind: 'answer', httpStatus: 401, text: '{"status":"RS_ERROR_INVALID_SIGNATURE","requestUuid":""}' });
      expect(answer).to.include({ status: 'RS_ERROR_INVALID_SIGNATURE', serviceStatus: 'RS_ERROR_INVALID_SIGNATURE' });
      expect(answer.problem).to.equal(undefined);
    });

    it('reads the status of a 5xx, or of a 4xx claiming success, but says the service would take it as RS_ERROR_UNKNOWN', () => {
      for (const [httpStatus, status] of [
        [500, 'RS_ERROR_INVALID_SIGNATURE'],
        [503, 'RS_OK'],
        [400, 'RS_OK'],
        [302, 'RS_ERROR_INVALID_SIGNATURE'],
      ] as const) {
        const answer = readAnswer({ kind: 'answer', httpStatus, text: JSON.stringify({ status, requestUuid: '' }) });
        expect(answer.status).to.equal(status);
        expect(answer.serviceStatus, `${status} with HTTP ${httpStatus}`).to.equal('RS_ERROR_UNKNOWN');
        expect(answer.problem).to.include(`HTTP ${httpStatus}`);
      }
    });

    it('takes no JSON, not an object, an unknown status and no answer as RS_ERROR_UNKNOWN', () => {
      for (const outcome of [
        { kind: 'answer' as const, httpStatus: 200, text: 'oops' },
        { kind: 'answer' as const, httpStatus: 200, text: '[1]' },
        { kind: 'answer' as const, httpStatus: 200, text: '{"status":"FINE"}' },
        { kind: 'failed' as const, error: 'network error: connect ECONNREFUSED' },
      ]) {
        const answer = readAnswer(outcome);
        expect(answer.serviceStatus, JSON.stringify(outcome)).to.equal('RS_ERROR_UNKNOWN');
        expect(answer.problem).to.be.a('string');
      }
    });

    it('reads a balance only from an RS_OK answer with a MicroAmount string, exactly (D18)', () => {
      const answer = (body: object, httpStatus = 200) => ({ kind: 'answer' as const, httpStatus, text: JSON.stringify(body) });
      expect(balanceOf(answer({ status: 'RS_OK', balanceMicro: '9007199254740993' }))).to.deep.equal({ balanceMicro: 9007199254740993n });
      expect(balanceOf({ kind: 'answer', httpStatus: 200, text: '{"status":"RS_OK","balanceMicro":1000000}' }))
        .to.have.property('problem')
        .that.includes('a JSON number (1000000)');
      expect(balanceOf(answer({ status: 'RS_OK' }))).to.have.property('problem');
      expect(balanceOf(answer({ status: 'RS_ERROR_USER_DISABLED', balanceMicro: '5' })))
        .to.have.property('problem')
        .that.includes('RS_ERROR_USER_DISABLED');
      expect(balanceOf(answer({ status: 'RS_OK', balanceMicro: '5' }, 500))).to.have.property('problem');
      expect(balanceOf({ kind: 'failed', error: 'no answer within 5000 ms' }))
        .to.have.property('problem')
        .that.includes('no answer within 5000 ms');
    });
  });

  describe('the start and the bet above the balance', () => {
    it('needs three stakes to start', () => {
      expect(startProblem(WALLET_CHECK_MIN_BALANCE_MICRO)).to.equal(undefined);
      expect(startProblem(WALLET_CHECK_MIN_BALANCE_MICRO - 1n)).to.include('at least 30000');
    });

    it('bets one micro-unit above the balance, within a stake\'s bounds (contract 2.1)', () => {
      expect(overBalanceStake(5n)).to.deep.equal({ amountMicro: 6n });
      expect(overBalanceStake(MAX_MICRO - 1n)).to.deep.equal({ amountMicro: MAX_MICRO });
      expect(overBalanceStake(MAX_MICRO)).to.have.property('problem');
      expect(overBalanceStake(-1n)).to.have.property('problem');
    });
  });

  describe('the checks', () => {
    it('a conforming wallet passes every check, named and ordered as D38 says', () => {
      const checks = evaluate(conformingRun());
      expect(checks.map((check) => check.name)).to.deep.equal([...WALLET_CHECKS]);
      expect(checks.filter((check) => !check.passed)).to.deep.equal([]);
    });

    it('signature-refused: a booked bad signature fails, a refusal with any HTTP status passes', () => {
      expect(failing(conformingRun({ 'bad-signature': (c) => answered(c, {}, { deltaMicro: -STAKE }) }))).to.include('signature-refused');
      // refused but the money moved
      expect(failing(conformingRun({ 'bad-signature': (c) => ({ ...c, deltaMicro: -STAKE }) }))).to.include('signature-refused');
      expect(failing(conformingRun({ 'bad-signature': (c) => answered(c, { status: 'RS_ERROR_INVALID_SIGNATURE' }) }))).to.deep.equal([]);
      expect(failing(conformingRun({ 'bad-signature': (c) => answered(c, { status: 'RS_ERROR_INVALID_SIGNATURE', httpStatus: 403 }) }))).to.deep.equal([]);
    });

    it('signature-refused: any answer but the documented refusal fails, even when no money moved', () => {
      const wrong: [string, Answer][] = [
        ['200 RS_OK', { status: 'RS_OK' }],
        ['200 RS_ERROR_UNKNOWN', { status: 'RS_ERROR_UNKNOWN' }],
        ['500 RS_ERROR_INVALID_SIGNATURE', { status: 'RS_ERROR_INVALID_SIGNATURE', httpStatus: 500 }],
        ['401 with an HTML page', { httpStatus: 401, text: '<html>Unauthorized</html>' }],
        ['500 with an HTML page', { httpStatus: 500, text: '<html>Internal Server Error</html>' }],
      ];
      for (const [name, answer] of wrong) {
        const run = conformingRun({ 'bad-signature': (c) => answered(c, answer) });
        expect(failing(run), name).to.include('signature-refused');
        expect(detailOf(run, 'signature-refused'), name).to.include('RS_ERROR_INVALID_SIGNATURE in a JSON body');
      }
    });

    it('bet-idempotent-request: a repeat answered differently, or debiting again, fails', () => {
      const different = conformingRun({ 'bet-repeat': (c) => answered(c, { status: 'RS_ERROR_DUPLICATE_TRANSACTION' }) });
      expect(failing(different)).to.deep.equal(['bet-idempotent-request']);
      expect(detailOf(different, 'bet-idempotent-request')).to.include('a different answer').and.include('4.3 rule 1');
      const debits = conformingRun({ 'bet-repeat': (c) => ({ ...c, deltaMicro: -STAKE }) });
      expect(failing(debits)).to.include('bet-idempotent-request');
    });

    it('bet-duplicate-transaction: RS_OK or DUPLICATE with no money passes; a second debit fails', () => {
      expect(failing(conformingRun({ 'bet-duplicate': (c) => answered(c, { balanceMicro: '990000' }) }))).to.deep.equal([]);
      const debits = conformingRun({ 'bet-duplicate': (c) => ({ ...c, deltaMicro: -STAKE }) });
      expect(failing(debits)).to.include('bet-duplicate-transaction');
      expect(detailOf(debits, 'bet-duplicate-transaction')).to.include('debited 10000');
    });

    it('win-with-reference, rollback-known, rollback-unknown, debit-after-rollback, not-enough-money: each fails alone', () => {
      const cases: [WalletCheckStep, WalletCheckName, (c: WalletCheckCall) => WalletCheckCall][] = [
        ['win-unknown', 'win-with-reference', (c) => answered(c, {}, { deltaMicro: STAKE })],
        ['win', 'win-with-reference', (c) => ({ ...c, deltaMicro: 0n })],
        ['rollback', 'rollback-known', (c) => ({ ...c, deltaMicro: 0n })],
        ['rollback-unknown', 'rollback-unknown', (c) => answered(c, { status: 'RS_ERROR_UNKNOWN' })],
        ['bet-after-rollback', 'debit-after-rollback', (c) => answered(c, {}, { deltaMicro: -STAKE })],
        // a clean refusal must be HTTP 200 or a 4xx: the service takes a 503 as RS_ERROR_UNKNOWN (D13)
        ['bet-over-balance', 'not-enough-money', (c) => answered(c, { status: 'RS_ERROR_NOT_ENOUGH_MONEY', httpStatus: 503 })],
      ];
      for (const [step, name, change] of cases) {
        const run = conformingRun({ [step]: change });
        // the end balance is not restored in these records, so only the named check is asked for
        expect(failing(run), step).to.include(name);
        expect(failing(run).filter((failed) => failed !== 'balance-restored'), step).to.deep.equal([name]);
      }
    });

    // contract 2.6, 8.4, D42
    it('free-bet, free-bet-rollback: a free bet that debits cash, a "0" win refused or crediting, a rollback that credits: each fails alone', () => {
      const cases: [WalletCheckStep, WalletCheckName, (c: WalletCheckCall) => WalletCheckCall][] = [
        ['free-bet', 'free-bet', (c) => ({ ...c, deltaMicro: -STAKE })],
        ['free-win', 'free-bet', (c) => answered(c, { status: 'RS_ERROR_WRONG_TYPES' })],
        ['free-win', 'free-bet', (c) => ({ ...c, deltaMicro: STAKE })],
        ['free-bet-2', 'free-bet-rollback', (c) => ({ ...c, deltaMicro: -STAKE })],
        ['free-rollback', 'free-bet-rollback', (c) => ({ ...c, deltaMicro: STAKE })],
      ];
      for (const [step, name, change] of cases) {
        const run = conformingRun({ [step]: change });
        expect(failing(run).filter((failed) => failed !== 'balance-restored'), step).to.deep.equal([name]);
      }
      const cash = conformingRun({ 'free-bet': (c) => ({ ...c, deltaMicro: -STAKE }) });
      expect(detailOf(cash, 'free-bet')).to.match(/^a free bet of 10000 \(isFree: true, bonusRef\) was answered RS_OK and debited 10000; .*debit no cash/);
    });

    it('amounts-as-strings: a JSON number anywhere fails, naming the endpoint', () => {
      const run = conformingRun({ 'bet-2': (c) => answered(c, { text: `{"status":"RS_OK","requestUuid":"${c.requestUuid}","balanceMicro":990000}` }) });
      expect(failing(run)).to.deep.equal(['amounts-as-strings']);
      expect(detailOf(run, 'amounts-as-strings')).to.include('bet answer: balanceMicro is a JSON number (990000)');
    });

    it('request-uuid-echo: any letter case passes; a missing or other requestUuid fails', () => {
      expect(failing(conformingRun({ win: (c) => answered(c, { echo: c.requestUuid.toUpperCase() }) }))).to.deep.equal([]);
      expect(failing(conformingRun({ win: (c) => answered(c, { echo: null }) }))).to.deep.equal(['request-uuid-echo']);
      const other = conformingRun({ rollback: (c) => answered(c, { echo: randomUUID() }) });
      expect(failing(other)).to.deep.equal(['request-uuid-echo']);
      expect(detailOf(other, 'request-uuid-echo')).to.include('rollback answer: requestUuid');
    });

    it('balance-restored compares the end with the start', () => {
      const run = { ...conformingRun(), endBalanceMicro: START - STAKE };
      expect(failing(run)).to.deep.equal(['balance-restored']);
      expect(detailOf(run, 'balance-restored')).to.include(`${START} at the start and ${START - STAKE} at the end (-10000)`);
    });

    it('a run stopped at the start fails every check it did not run, saying why', () => {
      const stopped: WalletCheckRun = {
        stakeMicro: STAKE,
        calls: [call('balance', 'balance', {}, { outcome: { kind: 'failed', error: 'network error: connect ECONNREFUSED 127.0.0.1:1' } })],
        stopped: 'the balance call was answered with no usable answer (network error: connect ECONNREFUSED 127.0.0.1:1)',
      };
      const checks = evaluate(stopped);
      expect(checks.map((check) => check.name)).to.deep.equal([...WALLET_CHECKS]);
      for (const check of checks) {
        expect(check.passed, check.name).to.equal(false);
        expect(check.detail, check.name).to.match(/^not run: .*ECONNREFUSED/);
      }
    });
  });

  describe('giving the money back', () => {
    it('a conforming run needs no reversal, and lists the four movements', () => {
      const run = conformingRun();
      expect(reversals(run.calls)).to.deep.equal([]);
      expect(movements(run.calls).map((move) => `${move.endpoint} ${move.direction} ${move.amountMicro}`)).to.deep.equal([
        'bet debit 10000',
        'win credit 10000',
        'bet debit 10000',
        'rollback credit 10000',
      ]);
    });

    it('rolls back every bet the wallet kept, and a win it credited without its bet', () => {
      const run = conformingRun({
        'bad-signature': (c) => ({ ...c, deltaMicro: -STAKE }),
        'bet-after-rollback': (c) => ({ ...c, deltaMicro: -STAKE }),
        'win-unknown': (c) => ({ ...c, deltaMicro: STAKE }),
        rollback: (c) => ({ ...c, deltaMicro: 0n }),
      });
      const find = (step: WalletCheckStep) => run.calls.find((c) => c.step === step)!;
      expect(reversals(run.calls).map((reversal) => reversal.referenceTransactionUuid).sort()).to.deep.equal(
        [find('bad-signature').transactionUuid, find('bet-after-rollback').transactionUuid, find('win-unknown').transactionUuid, find('bet-2').transactionUuid].sort(),
      );
      // the won bet is settled by its win: rolling it back would pay the stake twice
      expect(reversals(run.calls).map((reversal) => reversal.referenceTransactionUuid)).not.to.include(find('bet').transactionUuid);
    });

    it('reverses nothing whose movement the balance calls did not see', () => {
      const run = conformingRun({ 'bet-2': (c) => ({ ...c, deltaMicro: undefined }) as WalletCheckCall });
      expect(reversals(run.calls)).to.deep.equal([]);
    });
  });

  describe('latency (contract 8.5)', () => {
    it('percentiles are nearest-rank', () => {
      const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
      expect(percentile(hundred, 50)).to.equal(50);
      expect(percentile(hundred, 99)).to.equal(99);
      expect(percentile([7], 99)).to.equal(7);
      expect(percentile([3, 1, 2], 50)).to.equal(2);
      expect(percentile([], 50)).to.equal(undefined);
    });

    it('names the objectives per endpoint, over answered calls only', () => {
      const calls = [
        { ...call('balance', 'balance', {}), latencyMs: 10 },
        { ...call('balance', 'balance', {}), latencyMs: 250 },
        { ...call('bet', 'bet', {}), latencyMs: 40 },
        { ...call('bet', 'bet', {}), latencyMs: 9000, outcome: { kind: 'failed' as const, error: 'no answer within 5000 ms' } },
      ];
      const summary = latencySummary(calls);
      expect(summary).to.deep.include({ calls: 3, p50: 40, p99: 250 });
      expect(summary.objectives).to.deep.equal([
        { endpoint: 'bet', calls: 1, p99Ms: 40, objectiveP99Ms: 300, met: true },
        { endpoint: 'balance', calls: 2, p99Ms: 250, objectiveP99Ms: 200, met: false },
      ]);
    });
  });
});
