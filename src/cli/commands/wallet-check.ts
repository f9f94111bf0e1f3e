import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import type { WalletEndpoint } from '../../shared/domain/wallet-status.js';
import {
  WALLET_CHECKS,
  WALLET_CHECK_BONUS_REF,
  WALLET_CHECK_STAKE_MICRO,
  balanceOf,
  evaluate,
  latencySummary,
  movements,
  overBalanceStake,
  reversals,
  startProblem,
  type LatencySummary,
  type Movement,
  type WalletCheckCall,
  type WalletCheckOutcome,
  type WalletCheckResult,
  type WalletCheckRun,
  type WalletCheckStep,
} from '../../shared/domain/wallet-conformance.js';
import { WALLET_ANSWER_MAX_BYTES } from '../../shared/wallet/client.js';
import { OutboundHttp } from '../../shared/wallet/outbound.js';
import { FailedAnswer, TextAnswer, UsageError, type Action } from '../kit.js';

// `rgs wallet-check` (D38): an operator's wallet checked against the contract, as the
// service would call it, with no database or Redis: an integrator runs it against their
// staging wallet. The calls are made here, through the service's own outbound path
// (outbound.ts: signed per contract 5.1, kept-alive, capped, timed out); what each answer
// means is decided in domain/wallet-conformance.ts. It moves stakes of 10000 micro-units,
// gives every one back (a win or a rollback), and lists each call that moved money.

export class WalletCheckUsageError extends Error {
  override name = 'WalletCheckUsageError';
}

export type WalletCheckOptions = {
  url: string;
  kid: string;
  secret: string;
  operatorId: string;
  playerRef: string;
  currency: string;
};

export type WalletCheckReport = {
  passed: boolean;
  checks: WalletCheckResult[];
  moved: Movement[];
  latencyMs: LatencySummary;
  balanceMicro: { start: string | null; end: string | null };
  stopped?: string;
};

export const WALLET_CHECK_DEFAULTS = { playerRef: 'rgs-wallet-check', currency: 'EUR' };
// contract 2.5: every body names a game; the service's is dice
const GAME_CODE = 'dice';
// contract 8.1: WALLET_CALL_TIMEOUT_MS, by default
const CALL_TIMEOUT_MS = 5000;
// signs the bad-signature call: the right key id, the wrong secret
const WRONG_SECRET = 'rgs-wallet-check: not the secret of this key id';
const CURRENCY = /^[A-Z0-9]{3,10}$/;

// the command line's values, checked before anything is sent
export function walletCheckOptions(values: Record<string, unknown>): WalletCheckOptions {
  const text = (name: string, fallback?: string): string => {
    const value = values[name] ?? fallback;
    if (typeof value !== 'string' || value === '') throw new WalletCheckUsageError(`--${name} is required`);
    return value;
  };
  const url = text('url').replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WalletCheckUsageError(`--url ${url} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new WalletCheckUsageError('--url must be an http: or https: URL');
  if (parsed.search !== '' || parsed.hash !== '') throw new WalletCheckUsageError('--url is the wallet base URL, without a query or fragment');
  const playerRef = text('player', WALLET_CHECK_DEFAULTS.playerRef);
  // contract 2.1: PlayerRef
  if ([...playerRef].length > 128) throw new WalletCheckUsageError('--player must be 1 to 128 characters');
  const currency = text('currency', WALLET_CHECK_DEFAULTS.currency);
  if (!CURRENCY.test(currency)) throw new WalletCheckUsageError('--currency must be 3 to 10 of A-Z 0-9 (contract 2.1)');
  return { url, kid: text('kid'), secret: text('secret'), operatorId: text('operator'), playerRef, currency };
}

export async function runWalletCheck(options: WalletCheckOptions): Promise<WalletCheckReport> {
  const outbound = new OutboundHttp(false, 'wallet URL');
  try {
    return report(await new Run(options, outbound).perform());
  } finally {
    outbound.close();
  }
}

// contract 2.6: isFree is the one field that is not a string
type Fields = Record<string, string | true>;

class Run {
  private readonly calls: WalletCheckCall[] = [];
  private readonly bytesOf = new Map<WalletCheckCall, string>();
  private readonly stake = WALLET_CHECK_STAKE_MICRO;
  // the last balance read; undefined after a balance call that could not be read
  private balance: bigint | undefined;

  constructor(
    private readonly options: WalletCheckOptions,
    private readonly outbound: OutboundHttp,
  ) {}

  async perform(): Promise<WalletCheckRun> {
    const run = (extra: Partial<WalletCheckRun>): WalletCheckRun => ({ stakeMicro: this.stake, calls: this.calls, ...extra });
    const start = await this.readBalance();
    if ('problem' in start) return run({ stopped: start.problem });
    const tooLow = startProblem(start.balanceMicro);
    if (tooLow) return run({ startBalanceMicro: start.balanceMicro, stopped: tooLow });

    const stake = this.stake.toString();
    // contract 5.2
    const bad = this.bet();
    await this.moving('bad-signature', 'bet', bad, { secret: WRONG_SECRET });
    // contract 4.3 rules 1 and 2
    const first = this.bet();
    const booked = await this.moving('bet', 'bet', first);
    await this.moving('bet-repeat', 'bet', first, { repeat: booked });
    await this.moving('bet-duplicate', 'bet', first);
    // contract 4.2, the win
    await this.moving('win-unknown', 'win', { ...this.movement(randomUUID()), referenceTransactionUuid: randomUUID(), amountMicro: stake });
    await this.moving('win', 'win', { ...this.movement(first.roundId), referenceTransactionUuid: first.transactionUuid, amountMicro: stake });
    // contract 4.2, the rollback of a booked bet, then of one never seen, then its late debit (D27)
    const second = this.bet();
    await this.moving('bet-2', 'bet', second);
    await this.moving('rollback', 'rollback', { ...this.movement(second.roundId), referenceTransactionUuid: second.transactionUuid });
    const late = this.bet();
    await this.moving('rollback-unknown', 'rollback', { ...this.movement(late.roundId), referenceTransactionUuid: late.transactionUuid });
    await this.moving('bet-after-rollback', 'bet', late);
    // contract 4.2, a bet above the balance
    let stopped: string | undefined;
    if (this.balance === undefined) stopped = 'the balance before the bet above it could not be read';
    else {
      const over = overBalanceStake(this.balance);
      if ('problem' in over) stopped = over.problem;
      else await this.moving('bet-over-balance', 'bet', { ...this.bet(), amountMicro: over.amountMicro.toString() });
    }
    // contract 2.6, 8.4, D42: a free bet and its win of "0", then a free bet and its rollback
    const free = { ...this.bet(), isFree: true as const, bonusRef: WALLET_CHECK_BONUS_REF };
    await this.moving('free-bet', 'bet', free);
    await this.moving('free-win', 'win', { ...this.movement(free.roundId), referenceTransactionUuid: free.transactionUuid, amountMicro: '0' });
    const freeAgain = { ...this.bet(), isFree: true as const, bonusRef: WALLET_CHECK_BONUS_REF };
    await this.moving('free-bet-2', 'bet', freeAgain);
    await this.moving('free-rollback', 'rollback', { ...this.movement(freeAgain.roundId), referenceTransactionUuid: freeAgain.transactionUuid });
    // give back whatever is still moved
    for (const reversal of reversals(this.calls)) {
      await this.moving('restore', 'rollback', {
        ...this.movement(reversal.roundId),
        referenceTransactionUuid: reversal.referenceTransactionUuid,
      });
    }
    return run({
      startBalanceMicro: start.balanceMicro,
      ...(this.balance === undefined ? {} : { endBalanceMicro: this.balance }),
      ...(stopped === undefined ? {} : { stopped }),
    });
  }

  // contract 2.6: a bet of the stake, with its own transaction and round
  private bet(): Fields & { transactionUuid: string; roundId: string } {
    return { transactionUuid: randomUUID(), amountMicro: this.stake.toString(), roundId: randomUUID() };
  }

  // contract 2.7, 2.8: a win's or a rollback's own transaction, in the bet's round
  private movement(roundId?: string): Fields {
    return { transactionUuid: randomUUID(), ...(roundId === undefined ? {} : { roundId }) };
  }

  // A call that may move money, then a balance call: the difference is what it moved.
  // repeat: the very same request again (same requestUuid, same bytes, signed afresh, D6).
  private async moving(
    step: WalletCheckStep,
    endpoint: WalletEndpoint,
    fields: Fields,
    how: { secret?: string; repeat?: WalletCheckCall } = {},
  ): Promise<WalletCheckCall> {
    const before = this.balance;
    const call = await this.send(step, endpoint, fields, how);
    await this.readBalance();
    if (before !== undefined && this.balance !== undefined) call.deltaMicro = this.balance - before;
    return call;
  }

  private async readBalance(): Promise<{ balanceMicro: bigint } | { problem: string }> {
    const call = await this.send('balance', 'balance', {});
    const read = balanceOf(call.outcome);
    this.balance = 'balanceMicro' in read ? read.balanceMicro : undefined;
    return read;
  }

  private async send(
    step: WalletCheckStep,
    endpoint: WalletEndpoint,
    fields: Fields,
    { secret, repeat }: { secret?: string; repeat?: WalletCheckCall } = {},
  ): Promise<WalletCheckCall> {
    const { operatorId, playerRef, currency } = this.options;
    const requestUuid = repeat?.requestUuid ?? randomUUID();
    // contract 2.5: the common fields; money as MicroAmount strings
    const bytes = (repeat && this.bytesOf.get(repeat)) ?? JSON.stringify({ requestUuid, operatorId, playerRef, currency, gameCode: GAME_CODE, ...fields });
    const url = new URL(`${this.options.url}/wallet/${endpoint}`);
    const target = { keyId: this.options.kid, secret: secret ?? this.options.secret, privateAllowed: true };
    const started = performance.now();
    const sent = await this.outbound.post(url, bytes, target, { timeoutMs: CALL_TIMEOUT_MS, maxAnswerBytes: WALLET_ANSWER_MAX_BYTES });
    const latencyMs = Math.round(performance.now() - started);
    const outcome: WalletCheckOutcome =
      sent.kind === 'response' ? { kind: 'answer', httpStatus: sent.httpStatus, text: sent.text } : { kind: 'failed', error: sent.error };
    const call: WalletCheckCall = {
      step,
      endpoint,
      requestUuid,
      ...(typeof fields.transactionUuid === 'string' ? { transactionUuid: fields.transactionUuid } : {}),
      ...(typeof fields.referenceTransactionUuid === 'string' ? { referenceTransactionUuid: fields.referenceTransactionUuid } : {}),
      ...(typeof fields.roundId === 'string' ? { roundId: fields.roundId } : {}),
      ...(typeof fields.amountMicro === 'string' ? { amountMicro: BigInt(fields.amountMicro) } : {}),
      outcome,
      latencyMs,
    };
    this.calls.push(call);
    this.bytesOf.set(call, bytes);
    return call;
  }
}

function report(run: WalletCheckRun): WalletCheckReport {
  const checks = evaluate(run);
  return {
    passed: checks.every((check) => check.passed),
    checks,
    moved: movements(run.calls),
    latencyMs: latencySummary(run.calls),
    balanceMicro: { start: run.startBalanceMicro?.toString() ?? null, end: run.endBalanceMicro?.toString() ?? null },
    ...(run.stopped === undefined ? {} : { stopped: run.stopped }),
  };
}

// The report for a person: a line per check, the money moved, the balance and the latency.
export function walletCheckTable(report: WalletCheckReport, options: WalletCheckOptions): string {
  const lines: string[] = [`Wallet check of ${options.url} (operator ${options.operatorId}, player ${options.playerRef}, ${options.currency})`, ''];
  if (report.stopped !== undefined) lines.push(`Stopped: ${report.stopped}`, '');
  const width = Math.max(...WALLET_CHECKS.map((name) => name.length), 'check'.length);
  lines.push(`${'check'.padEnd(width)}  result  detail`);
  for (const check of report.checks) lines.push(`${check.name.padEnd(width)}  ${(check.passed ? 'pass' : 'FAIL').padEnd(6)}  ${check.detail}`);
  lines.push('');
  if (report.moved.length === 0) lines.push('Money moved: none');
  else {
    lines.push(`Money moved (${report.moved.length} calls):`);
    for (const move of report.moved) {
      lines.push(`  /wallet/${move.endpoint.padEnd(8)}  ${move.transactionUuid}  ${move.direction.padEnd(6)}  ${move.amountMicro}`);
    }
  }
  const { start, end } = report.balanceMicro;
  lines.push(`Balance: ${start ?? 'unknown'} at the start, ${end ?? 'unknown'} at the end (micro-units)`);
  lines.push('', latencyText(report.latencyMs));
  const failed = report.checks.filter((check) => !check.passed).length;
  lines.push('', report.passed ? `PASSED: all ${report.checks.length} checks` : `FAILED: ${failed} of ${report.checks.length} checks`);
  return `${lines.join('\n')}\n`;
}

// Contract 8.5's objectives are over 30 days of production traffic; the few calls of this
// check, from wherever it runs, cannot meet or miss them, so they are shown and not judged.
function latencyText(latency: LatencySummary): string {
  if (latency.calls === 0) return 'Latency: no call was answered';
  const lines = [`Latency over ${latency.calls} answered calls: p50 ${latency.p50} ms, p99 ${latency.p99} ms`];
  for (const objective of latency.objectives) {
    if (objective.p99Ms === null) continue;
    lines.push(
      `  /wallet/${objective.endpoint} p99 ${objective.p99Ms} ms over ${objective.calls} calls: objective under ${objective.objectiveP99Ms} ms ` +
        `(contract 8.5) ${objective.met ? 'met' : 'NOT met'}`,
    );
  }
  lines.push('  (shown only: the objectives are over 30 days of production traffic, not a few calls; they do not fail the check)');
  return lines.join('\n');
}

const WALLET_CHECK_HELP = `
Calls the wallet as the service would (contract 4.2, 4.3, 5.1, D27), with the wallet
credential the operator's wallet knows (its walletKeyId and walletSignatureSecret), and puts
--operator in every body. It needs no database. Use a test player with a balance of at least
30000 micro-units and no other activity: the check moves stakes of 10000, gives every one
back (a win or a rollback), and judges each call by the balance before and after it. One
bet is the balance plus one micro-unit, which the wallet must refuse; if it books it, it is
rolled back at once. Two free bets (isFree, bonusRef ${WALLET_CHECK_BONUS_REF}) must debit no
cash, with a win of "0" and a rollback that credit nothing. Checks: signature-refused,
bet-idempotent-request, bet-duplicate-transaction, win-with-reference, rollback-known,
rollback-unknown, debit-after-rollback, not-enough-money, free-bet, free-bet-rollback,
amounts-as-strings, request-uuid-echo, balance-restored (docs/wallet-api.md, "Wallet conformance check"). Latency is shown against
contract 8.5, not judged. Exit 0: every check passed; 1: one failed; 2: the command line.

Example:
  rgs wallet-check --url https://wallet.staging.example.com --kid <walletKeyId> \
    --secret <walletSignatureSecret> --operator op1 --player test-player-1 --currency EUR`;

export function walletCheckCommand(program: Command, action: Action): void {
  // D38: an operator's wallet checked against the contract, with no database
  action(
    program
      .command('wallet-check')
      .description("check an operator's wallet against the contract; prints each check, exit 0 only when all pass")
      .requiredOption('--url <url>', "the wallet's base URL (the service appends /wallet/bet etc.)")
      .requiredOption('--kid <kid>', 'the wallet credential: its walletKeyId')
      .requiredOption('--secret <secret>', 'the wallet credential: its walletSignatureSecret')
      .requiredOption('--operator <id>', 'the operator id put in every body')
      .option('--player <ref>', 'the test player', WALLET_CHECK_DEFAULTS.playerRef)
      .option('--currency <code>', "the player's currency", WALLET_CHECK_DEFAULTS.currency)
      .option('--json', 'print JSON instead of the table')
      .addHelpText('after', WALLET_CHECK_HELP),
    async (values) => {
      let options;
      try {
        options = walletCheckOptions(values);
      } catch (err) {
        if (err instanceof WalletCheckUsageError) throw new UsageError(err.message);
        throw err;
      }
      const report = await runWalletCheck(options);
      if (!values.json) return new TextAnswer(walletCheckTable(report, options), !report.passed);
      return report.passed ? report : new FailedAnswer(report);
    },
  );
}
