// The wallet conformance check (`rgs wallet-check`, D38) as pure rules: the checks, how a
// wallet's answer is read, what each recorded call says about a rule of contract 2.6, 2.10,
// 4.2, 4.3, 5.2, 8.4, D27 and D42, which reversals give the player back the balance found at the start,
// and the latency percentiles against contract 8.5. The calls themselves are made by
// src/cli/commands/wallet-check.ts, which records each one as a WalletCheckCall.
//
// The check judges a wallet as a black box, by what the service would see: every call that
// may move money is followed by a balance call, and the difference between the two balances
// is what the call moved. Money is bigint micro-units (D18): a balance is read only from a
// MicroAmount string.

import { MAX_MICRO, isMicroAmount, parseMicro } from './money.js';
import { isRsStatus, statusOfAnswer, type WalletEndpoint } from './wallet-status.js';

// D38: stable names, in the order they are printed
export const WALLET_CHECKS = [
  'signature-refused',
  'bet-idempotent-request',
  'bet-duplicate-transaction',
  'win-with-reference',
  'rollback-known',
  'rollback-unknown',
  'debit-after-rollback',
  'not-enough-money',
  'free-bet',
  'free-bet-rollback',
  'amounts-as-strings',
  'request-uuid-echo',
  'balance-restored',
] as const;
export type WalletCheckName = (typeof WALLET_CHECKS)[number];

// The steps of a run, in order. Each step other than 'balance' is one call that may move
// money; 'restore' is a rollback sent at the end to give back what a step moved.
export type WalletCheckStep =
  | 'balance'
  | 'bad-signature' // a bet signed with a wrong secret
  | 'bet' // a bet of the stake
  | 'bet-repeat' // the same request again: same requestUuid, same bytes (4.3 rule 1)
  | 'bet-duplicate' // the same transactionUuid under a new requestUuid (4.3 rule 2)
  | 'win-unknown' // a win referencing a bet the wallet never saw
  | 'win' // a win of the stake referencing the bet
  | 'bet-2' // a second bet of the stake
  | 'rollback' // its rollback
  | 'rollback-unknown' // a rollback of a transaction the wallet never saw
  | 'bet-after-rollback' // the debit of that very transactionUuid, after its rollback (D27)
  | 'bet-over-balance' // a bet of the balance plus one micro-unit
  | 'free-bet' // a free bet of the stake: isFree with a bonusRef (contract 2.6, D42)
  | 'free-win' // its win of "0", the zero net payout of a free bet (contract 2.7, 8.4)
  | 'free-bet-2' // a second free bet of the stake
  | 'free-rollback' // its rollback
  | 'restore';

// D42: the bonusRef (a campaignRef) of the check's free bets
export const WALLET_CHECK_BONUS_REF = 'rgs-wallet-check';

// the smallest stake a game takes by default (game-config.ts minBetMicro): the check moves
// no more than this, except the one bet above the balance that a wallet must refuse
export const WALLET_CHECK_STAKE_MICRO = 10_000n;
// The run needs the stake three times over: a wallet that books what it should refuse (the
// bad signature, the late debit) holds up to three stakes before the end gives them back.
export const WALLET_CHECK_MIN_BALANCE_MICRO = 3n * WALLET_CHECK_STAKE_MICRO;

// What came back from one HTTP exchange, as received.
export type WalletCheckOutcome =
  | { kind: 'answer'; httpStatus: number; text: string }
  // no answer: a timeout, a refused connection, an answer over the size cap
  | { kind: 'failed'; error: string };

export type WalletCheckCall = {
  step: WalletCheckStep;
  endpoint: WalletEndpoint;
  requestUuid: string;
  transactionUuid?: string;
  referenceTransactionUuid?: string;
  roundId?: string;
  amountMicro?: bigint;
  outcome: WalletCheckOutcome;
  latencyMs: number;
  // a call that may move money: the balance after it minus the balance before it, read by
  // the balance calls around it; undefined when either could not be read
  deltaMicro?: bigint;
};

export type WalletCheckRun = {
  stakeMicro: bigint;
  calls: WalletCheckCall[];
  startBalanceMicro?: bigint;
  endBalanceMicro?: bigint;
  // why the run stopped before its checks (the wallet unreachable, a balance too low)
  stopped?: string;
};

export type WalletCheckResult = { name: WalletCheckName; passed: boolean; detail: string };

// A wallet's answer as the check reads it. `status` is the RS_ status of a JSON object
// answer, whatever its HTTP status; `serviceStatus` is what the service would take it for
// (contract 2.10, D13: a JSON object with a known status, with a 2xx or, for a refusal, a
// 4xx; anything else is RS_ERROR_UNKNOWN). The requestUuid echo is judged by its own check, not folded in here,
// so that one missing echo does not hide every other rule.
export type ReadAnswer = {
  httpStatus?: number;
  body?: Record<string, unknown>;
  status?: string;
  serviceStatus: string;
  // why the service would not take the answer at its word
  problem?: string;
};

export function readAnswer(outcome: WalletCheckOutcome): ReadAnswer {
  if (outcome.kind === 'failed') return { serviceStatus: 'RS_ERROR_UNKNOWN', problem: outcome.error };
  const { httpStatus, text } = outcome;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { httpStatus, serviceStatus: 'RS_ERROR_UNKNOWN', problem: `HTTP ${httpStatus}, the answer is not JSON` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { httpStatus, serviceStatus: 'RS_ERROR_UNKNOWN', problem: `HTTP ${httpStatus}, the answer is not a JSON object` };
  }
  const body = parsed as Record<string, unknown>;
  const status = typeof body.status === 'string' ? body.status : undefined;
  const read = { httpStatus, body, ...(status === undefined ? {} : { status }) };
  if (!isRsStatus(status)) return { ...read, serviceStatus: 'RS_ERROR_UNKNOWN', problem: `unknown status ${JSON.stringify(body.status ?? null)}` };
  // as the service reads it (D13): a 2xx, or a 4xx that refuses; a 5xx or a 4xx claiming success is not
  const judged = statusOfAnswer(httpStatus, status);
  if (judged.problem !== undefined) {
    return { ...read, serviceStatus: 'RS_ERROR_UNKNOWN', problem: `${status} with HTTP ${httpStatus}: the service takes it as RS_ERROR_UNKNOWN` };
  }
  return { ...read, serviceStatus: judged.status };
}

// The balance of an answer to /wallet/balance, or why it cannot be read. Only an RS_OK
// answer's MicroAmount string counts (D18: never a JSON number).
export function balanceOf(outcome: WalletCheckOutcome): { balanceMicro: bigint } | { problem: string } {
  if (outcome.kind === 'failed') return { problem: `the balance call got no answer (${outcome.error})` };
  const answer = readAnswer(outcome);
  if (answer.serviceStatus !== 'RS_OK') return { problem: `the balance call was answered ${describeAnswer(answer)}` };
  const value = answer.body?.balanceMicro;
  if (!isMicroAmount(value)) return { problem: `the balance answer's balanceMicro is ${describeAmount(value)}, not a MicroAmount string` };
  return { balanceMicro: parseMicro(value) };
}

// The amount of the bet a wallet must refuse RS_ERROR_NOT_ENOUGH_MONEY: the balance plus one
// micro-unit, or why there is none (a stake is positive and at most 2^63-1, contract 2.1).
export function overBalanceStake(balanceMicro: bigint): { amountMicro: bigint } | { problem: string } {
  const amountMicro = balanceMicro + 1n;
  if (amountMicro <= 0n) return { problem: `the balance is ${balanceMicro}, so no stake is above it` };
  if (amountMicro > MAX_MICRO) return { problem: `the balance ${balanceMicro} is too large for a stake above it (2.1: at most 2^63-1)` };
  return { amountMicro };
}

// The precondition of a run: a balance the checks can work with.
export function startProblem(balanceMicro: bigint): string | undefined {
  if (balanceMicro < WALLET_CHECK_MIN_BALANCE_MICRO) {
    return (
      `the player's balance is ${balanceMicro} micro-units; the check needs at least ${WALLET_CHECK_MIN_BALANCE_MICRO} ` +
      `(three stakes of ${WALLET_CHECK_STAKE_MICRO}): credit the test player and run it again`
    );
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// The reversals that give the player back the balance found at the start.

export type Reversal = { referenceTransactionUuid: string; roundId?: string };

// Money is followed per movement: a bet and whatever references it (a win, a rollback), or a
// win whose bet the wallet did not know and whatever references it. A movement that left
// the player short (a debit nothing gave back) is reversed by rolling back its bet; one that
// left the player richer than a win of ours should (a win credited without its bet) by
// rolling back that win (contract 4.2: a rollback of a booked win debits the payout back).
// Only what the balance calls saw is reversed: a movement of unknown size is left to the
// balance-restored check to report.
export function reversals(calls: readonly WalletCheckCall[]): Reversal[] {
  const movements = new Map<string, { net: bigint; kind: 'bet' | 'win'; roundId?: string }>();
  const betTransactions = new Set(calls.filter((call) => call.endpoint === 'bet').map((call) => call.transactionUuid));
  for (const call of calls) {
    if (call.endpoint === 'balance' || call.transactionUuid === undefined) continue;
    const reference = call.referenceTransactionUuid;
    const [key, kind] =
      call.endpoint === 'bet'
        ? [call.transactionUuid, 'bet' as const]
        : reference !== undefined && betTransactions.has(reference)
          ? [reference, 'bet' as const]
          : call.endpoint === 'win'
            ? [call.transactionUuid, 'win' as const]
            : [reference ?? call.transactionUuid, 'win' as const];
    const movement = movements.get(key) ?? { net: 0n, kind, ...(call.roundId === undefined ? {} : { roundId: call.roundId }) };
    movement.net += call.deltaMicro ?? 0n;
    movements.set(key, movement);
  }
  const reverse: Reversal[] = [];
  for (const [referenceTransactionUuid, { net, kind, roundId }] of movements) {
    if ((kind === 'bet' && net < 0n) || (kind === 'win' && net > 0n)) {
      reverse.push({ referenceTransactionUuid, ...(roundId === undefined ? {} : { roundId }) });
    }
  }
  return reverse;
}

// Each call that moved money, by what the balance calls around it saw.
export type Movement = { endpoint: WalletEndpoint; transactionUuid: string; direction: 'debit' | 'credit'; amountMicro: string };

export function movements(calls: readonly WalletCheckCall[]): Movement[] {
  return calls
    .filter((call) => call.deltaMicro !== undefined && call.deltaMicro !== 0n)
    .map((call) => ({
      endpoint: call.endpoint,
      transactionUuid: call.transactionUuid ?? '',
      direction: call.deltaMicro! < 0n ? 'debit' : 'credit',
      amountMicro: (call.deltaMicro! < 0n ? -call.deltaMicro! : call.deltaMicro!).toString(),
    }));
}

// ---------------------------------------------------------------------------------------
// The checks.

const SUCCESS = ['RS_OK', 'RS_ERROR_DUPLICATE_TRANSACTION'];

export function evaluate(run: WalletCheckRun): WalletCheckResult[] {
  const stake = run.stakeMicro;
  const step = (name: WalletCheckStep) => run.calls.find((call) => call.step === name);
  const notRun = (name: WalletCheckName, why = run.stopped ?? 'an earlier step did not complete'): WalletCheckResult => ({
    name,
    passed: false,
    detail: `not run: ${why}`,
  });
  // one call: its answer is one of `expected` and it moved exactly `delta`
  const expect = (call: WalletCheckCall, expected: readonly string[], delta: bigint, what: string): { ok: boolean; said: string } => {
    const answer = readAnswer(call.outcome);
    const statusOk = expected.includes(answer.serviceStatus);
    const moved = call.deltaMicro;
    const ok = statusOk && moved === delta;
    return { ok, said: `${what} was answered ${describeAnswer(answer)} and ${describeDelta(moved)}` };
  };
  const single = (
    name: WalletCheckName,
    stepName: WalletCheckStep,
    expected: readonly string[],
    delta: bigint,
    what: string,
    rule: string,
  ): WalletCheckResult => {
    const call = step(stepName);
    if (!call) return notRun(name);
    const { ok, said } = expect(call, expected, delta, what);
    return { name, passed: ok, detail: ok ? said : `${said}; ${rule}` };
  };

  const results: WalletCheckResult[] = [];

  // contract 5.2: a wallet refuses a bad signature RS_ERROR_INVALID_SIGNATURE and moves
  // nothing. The refusal must be one the service reads as such (D13: with a 2xx or a 4xx,
  // 401 being usual): a 5xx, or a body the service cannot read, would have it roll back and
  // count a wallet that refused as one that is down.
  {
    const call = step('bad-signature');
    if (!call) results.push(notRun('signature-refused'));
    else {
      const answer = readAnswer(call.outcome);
      const ok = answer.serviceStatus === 'RS_ERROR_INVALID_SIGNATURE' && call.deltaMicro === 0n;
      const said = `a bet signed with a wrong secret was answered ${describeAnswer(answer, true)} and ${describeDelta(call.deltaMicro)}`;
      results.push({
        name: 'signature-refused',
        passed: ok,
        detail: ok
          ? said
          : `${said}; contract 5.2: refuse it RS_ERROR_INVALID_SIGNATURE in a JSON body echoing the requestUuid, with HTTP 401 (or another 4xx, or 200), and move no money`,
      });
    }
  }

  // contract 4.3 rule 1: a known requestUuid gets its stored answer, unchanged, and no effect
  {
    const first = step('bet');
    const repeat = step('bet-repeat');
    if (!first || !repeat) results.push(notRun('bet-idempotent-request'));
    else {
      const booked = expect(first, ['RS_OK'], -stake, `a bet of ${stake}`);
      const firstAnswer = readAnswer(first.outcome);
      const repeatAnswer = readAnswer(repeat.outcome);
      const same =
        repeatAnswer.status === firstAnswer.status &&
        repeatAnswer.httpStatus === firstAnswer.httpStatus &&
        sameValue(repeatAnswer.body?.balanceMicro, firstAnswer.body?.balanceMicro);
      const ok = booked.ok && same && repeat.deltaMicro === 0n;
      const said =
        `${booked.said}; the same request again (same requestUuid, same bytes) was answered ` +
        `${describeAnswer(repeatAnswer)}${same ? ', the same answer,' : ', a different answer,'} and ${describeDelta(repeat.deltaMicro)}`;
      results.push({
        name: 'bet-idempotent-request',
        passed: ok,
        detail: ok ? said : `${said}; contract 4.3 rule 1: a known requestUuid gets its stored answer again, unchanged, with no effect`,
      });
    }
  }

  // contract 4.3 rule 2: the same movement under a new request is not booked again
  results.push(
    single(
      'bet-duplicate-transaction',
      'bet-duplicate',
      SUCCESS,
      0n,
      "the bet's transactionUuid under a new requestUuid",
      'contract 4.3 rule 2: book nothing and answer RS_OK with the current balance or RS_ERROR_DUPLICATE_TRANSACTION',
    ),
  );

  // contract 4.2: a win references the bet; a win whose bet is unknown credits nothing
  {
    const unknown = step('win-unknown');
    const win = step('win');
    if (!unknown || !win) results.push(notRun('win-with-reference'));
    else {
      const refused = expect(unknown, ['RS_ERROR_TRANSACTION_DOES_NOT_EXIST'], 0n, 'a win referencing a bet the wallet never saw');
      const credited = expect(win, SUCCESS, stake, `a win of ${stake} referencing the bet`);
      const ok = refused.ok && credited.ok;
      const said = `${refused.said}; ${credited.said}`;
      results.push({
        name: 'win-with-reference',
        passed: ok,
        detail: ok
          ? said
          : `${said}; contract 4.2: credit a win of a booked bet, and answer one whose bet cannot be found RS_ERROR_TRANSACTION_DOES_NOT_EXIST`,
      });
    }
  }

  // contract 4.2: a rollback of a booked bet credits the stake back
  {
    const bet = step('bet-2');
    const rollback = step('rollback');
    if (!bet || !rollback) results.push(notRun('rollback-known'));
    else {
      const booked = expect(bet, ['RS_OK'], -stake, `a bet of ${stake}`);
      const refunded = expect(rollback, SUCCESS, stake, 'its rollback');
      const ok = booked.ok && refunded.ok;
      const said = `${booked.said}; ${refunded.said}`;
      results.push({
        name: 'rollback-known',
        passed: ok,
        detail: ok ? said : `${said}; contract 4.2: a rollback of a booked bet credits the stake back and answers RS_OK`,
      });
    }
  }

  // contract 4.2: nothing to roll back is RS_ERROR_TRANSACTION_DOES_NOT_EXIST (the service
  // takes it as complete; another refusal is retried for 24 hours, then a human is asked)
  results.push(
    single(
      'rollback-unknown',
      'rollback-unknown',
      ['RS_ERROR_TRANSACTION_DOES_NOT_EXIST'],
      0n,
      'a rollback of a transaction the wallet never saw',
      'contract 4.2: answer RS_ERROR_TRANSACTION_DOES_NOT_EXIST, move no money, and keep a tombstone (D27)',
    ),
  );

  // D27: a debit arriving after its own rollback moves no money
  results.push(
    single(
      'debit-after-rollback',
      'bet-after-rollback',
      ['RS_ERROR_TRANSACTION_DOES_NOT_EXIST'],
      0n,
      'a bet whose transactionUuid had been rolled back before it arrived',
      'D27, contract 4.2: a tombstoned debit moves no money and is answered RS_ERROR_TRANSACTION_DOES_NOT_EXIST',
    ),
  );

  // contract 4.2: a bet above the balance is a clean refusal
  {
    const call = step('bet-over-balance');
    if (!call) results.push(notRun('not-enough-money'));
    else {
      const { ok, said } = expect(call, ['RS_ERROR_NOT_ENOUGH_MONEY'], 0n, `a bet of ${call.amountMicro ?? '?'}, one micro-unit above the balance,`);
      results.push({
        name: 'not-enough-money',
        passed: ok,
        detail: ok ? said : `${said}; contract 4.2: refuse it RS_ERROR_NOT_ENOUGH_MONEY (HTTP 200) and debit nothing`,
      });
    }
  }

  // contract 2.6, 8.4, D42: a free bet (isFree, with its bonusRef) is booked with the stake
  // and debits no cash; a winning free bet whose net is 0 gets a win of "0", which the
  // wallet takes and which credits nothing
  {
    const bet = step('free-bet');
    const win = step('free-win');
    if (!bet || !win) results.push(notRun('free-bet'));
    else {
      const booked = expect(bet, ['RS_OK'], 0n, `a free bet of ${stake} (isFree: true, bonusRef)`);
      const zero = expect(win, SUCCESS, 0n, 'its win of "0"');
      const ok = booked.ok && zero.ok;
      const said = `${booked.said}; ${zero.said}`;
      results.push({
        name: 'free-bet',
        passed: ok,
        detail: ok
          ? said
          : `${said}; contract 2.6, 8.4 (D42): book a bet with isFree: true as the free bet it is, answer RS_OK and debit no cash (its stake is the operator's); take a win of "0" (a winning free bet's zero net) and credit nothing`,
      });
    }
  }

  // contract 4.2, 8.4, D42: a rollback of a free bet gives back what it took: nothing
  {
    const bet = step('free-bet-2');
    const rollback = step('free-rollback');
    if (!bet || !rollback) results.push(notRun('free-bet-rollback'));
    else {
      const booked = expect(bet, ['RS_OK'], 0n, `a second free bet of ${stake}`);
      const reversed = expect(rollback, SUCCESS, 0n, 'its rollback');
      const ok = booked.ok && reversed.ok;
      const said = `${booked.said}; ${reversed.said}`;
      results.push({
        name: 'free-bet-rollback',
        passed: ok,
        detail: ok
          ? said
          : `${said}; contract 4.2, 8.4 (D42): a free bet debits no cash, so its rollback answers RS_OK and credits nothing`,
      });
    }
  }

  results.push(amountsAsStrings(run), requestUuidEcho(run));

  // the end: the player's balance is where it was found
  if (run.startBalanceMicro === undefined) results.push(notRun('balance-restored'));
  else if (run.endBalanceMicro === undefined) results.push(notRun('balance-restored', run.stopped ?? 'the balance at the end could not be read'));
  else {
    const difference = run.endBalanceMicro - run.startBalanceMicro;
    results.push({
      name: 'balance-restored',
      passed: difference === 0n,
      detail:
        `the balance was ${run.startBalanceMicro} at the start and ${run.endBalanceMicro} at the end` +
        (difference === 0n ? '' : ` (${difference > 0n ? '+' : ''}${difference}), after a rollback of every debit the wallet kept`),
    });
  }
  return results;
}

// contract 2.10: balanceMicro, when present, is a MicroAmount string, never a JSON number;
// the balance endpoint's answer carries it
function amountsAsStrings(run: WalletCheckRun): WalletCheckResult {
  const name = 'amounts-as-strings';
  const answers = run.calls.map((call) => ({ call, answer: readAnswer(call.outcome) })).filter(({ answer }) => answer.body !== undefined);
  if (answers.length === 0) return { name, passed: false, detail: `not run: ${run.stopped ?? 'no answer was a JSON object'}` };
  const offences: string[] = [];
  let amounts = 0;
  for (const { call, answer } of answers) {
    const value = answer.body!.balanceMicro;
    if (value === undefined) {
      if (call.endpoint === 'balance' && answer.status === 'RS_OK') offences.push('a balance answer has no balanceMicro');
      continue;
    }
    amounts += 1;
    if (!isMicroAmount(value)) offences.push(`${call.endpoint} answer: balanceMicro is ${describeAmount(value)}`);
  }
  if (offences.length > 0) {
    return { name, passed: false, detail: `${summarise(offences)}; contract 2.10: a MicroAmount string, never a JSON number` };
  }
  return { name, passed: true, detail: `balanceMicro was a MicroAmount string in all ${amounts} answers that carried it` };
}

// contract 2.10: every answer echoes the request's requestUuid (any letter case)
function requestUuidEcho(run: WalletCheckRun): WalletCheckResult {
  const name = 'request-uuid-echo';
  const answers = run.calls.map((call) => ({ call, answer: readAnswer(call.outcome) })).filter(({ answer }) => answer.body !== undefined);
  if (answers.length === 0) return { name, passed: false, detail: `not run: ${run.stopped ?? 'no answer was a JSON object'}` };
  const offences: string[] = [];
  for (const { call, answer } of answers) {
    const echoed = answer.body!.requestUuid;
    if (typeof echoed !== 'string') offences.push(`${call.endpoint} answer: no requestUuid`);
    else if (echoed.toLowerCase() !== call.requestUuid.toLowerCase()) offences.push(`${call.endpoint} answer: requestUuid ${JSON.stringify(echoed)}, not ours`);
  }
  if (offences.length > 0) {
    return {
      name,
      passed: false,
      detail: `${summarise(offences)}; contract 2.10: echo the request's requestUuid (the service takes any other answer as RS_ERROR_UNKNOWN)`,
    };
  }
  return { name, passed: true, detail: `all ${answers.length} answers echoed the request's requestUuid` };
}

// ---------------------------------------------------------------------------------------
// Latency (contract 8.5).

// nearest rank: the smallest value with at least p percent of the values at or below it
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

// contract 8.5: /wallet/bet p99 under 300 ms; the balance endpoint's p99 under 200 ms
export const LATENCY_OBJECTIVES: readonly { endpoint: WalletEndpoint; p99Ms: number }[] = [
  { endpoint: 'bet', p99Ms: 300 },
  { endpoint: 'balance', p99Ms: 200 },
];

export type LatencyObjective = { endpoint: WalletEndpoint; calls: number; p99Ms: number | null; objectiveP99Ms: number; met: boolean | null };
export type LatencySummary = { calls: number; p50: number | null; p99: number | null; objectives: LatencyObjective[] };

// Over the calls that were answered (a call with no answer has no latency to speak of).
export function latencySummary(calls: readonly WalletCheckCall[]): LatencySummary {
  const answered = calls.filter((call) => call.outcome.kind === 'answer');
  const of = (list: readonly WalletCheckCall[]) => list.map((call) => call.latencyMs);
  return {
    calls: answered.length,
    p50: percentile(of(answered), 50) ?? null,
    p99: percentile(of(answered), 99) ?? null,
    objectives: LATENCY_OBJECTIVES.map(({ endpoint, p99Ms }) => {
      const list = answered.filter((call) => call.endpoint === endpoint);
      const p99 = percentile(of(list), 99);
      return { endpoint, calls: list.length, p99Ms: p99 ?? null, objectiveP99Ms: p99Ms, met: p99 === undefined ? null : p99 < p99Ms };
    }),
  };
}

// ---------------------------------------------------------------------------------------
// Wording.

// withHttp: the answer's RS_ status with its HTTP status, whatever that is
export function describeAnswer(answer: ReadAnswer, withHttp = false): string {
  if (answer.body === undefined) return `with no usable answer (${answer.problem ?? 'none'})`;
  const status = answer.status ?? 'no status';
  if (withHttp) return `${status} (HTTP ${answer.httpStatus})`;
  return answer.problem === undefined ? status : `${status} (${answer.problem})`;
}

function describeDelta(delta: bigint | undefined): string {
  if (delta === undefined) return 'moved an unknown amount (a balance call around it was not answered)';
  if (delta === 0n) return 'moved no money';
  return delta < 0n ? `debited ${-delta}` : `credited ${delta}`;
}

function describeAmount(value: unknown): string {
  if (typeof value === 'number') return `a JSON number (${JSON.stringify(value)})`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return `${value === null ? 'null' : typeof value}`;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function summarise(offences: readonly string[]): string {
  const unique = [...new Set(offences)];
  return unique.length <= 3 ? unique.join('; ') : `${unique.slice(0, 3).join('; ')}; and ${unique.length - 3} more`;
}
