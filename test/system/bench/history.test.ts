import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { historyHash } from '../../../bench/history.js';
import { HISTORY_OPERATORS, historyMonths, historyTemplateName } from '../../../bench/history-layout.js';
import type { Report } from '../../../bench/report.js';
import { runBench } from '../../support/bench-run.js';
import { payout } from '../../../src/shared/domain/payout.js';
import { dropDatabase } from '../../../src/shared/platform/db/migrate.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// `npm run bench -- --history N`: the run's database holds N settled bets of the past twelve
// months before the service starts, seeded once into a template that later runs copy. Runs
// the bench's smoke load on top of a small history, twice, and reads the template's rows.

const BETS = 2000;

const databaseUrl = (name: string) => {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

describe('npm run bench -- --smoke --history N', function () {
  this.timeout(240_000);
  let dir: string;
  let template: string;
  // a copy of the template to read (the template itself takes no connections)
  const copy = `rgs_test_history_${process.pid}`;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rgs-bench-history-'));
    template = historyTemplateName(BETS, await historyHash());
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
    await dropDatabase(databaseUrl(copy));
    await dropDatabase(databaseUrl(template));
  });

  async function read<T extends object>(sql: string): Promise<T[]> {
    const client = new pg.Client({ connectionString: databaseUrl(copy) });
    await client.connect();
    try {
      return (await client.query<T>(sql)).rows;
    } finally {
      await client.end();
    }
  }

  it('seeds the template, runs on a copy of it, and says so', async () => {
    const out = path.join(dir, 'first.json');
    const run = await runBench('--smoke', '--history', String(BETS), '--history-rebuild', '--out', out);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.include(`template ${template} seeded with ${BETS} bets`);
    expect(run.stdout).to.match(new RegExp(`history +2,000 settled bets of [0-9-]+ to [0-9-]+, from template ${template} `));
    const report = JSON.parse(await readFile(out, 'utf8')) as Report;
    expect(report.run.history).to.include({ bets: BETS, template, reused: false });
    expect(report.run.history!.seedSeconds).to.be.above(0);
    expect(report.run.history!.templateBytes).to.be.above(0);
    // the service bet on top of the history: the history's operators were adopted
    expect(report.throughput.acceptedBetsPerS).to.be.above(0);
    expect(report.failures.total, JSON.stringify(report.failures.byKind)).to.equal(0);

    const admin = new pg.Client({ connectionString: databaseUrl('postgres') });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(copy)} TEMPLATE ${pg.escapeIdentifier(template)}`);
    } finally {
      await admin.end();
    }
  });

  it('holds every bet settled, once a month over the twelve months before the current one, across the operators', async () => {
    const months = historyMonths(new Date());
    const perMonth = await read<{ month: Date; bets: number }>(
      `SELECT date_trunc('month', created_at, 'UTC') AS month, count(*)::int AS bets FROM bets GROUP BY 1 ORDER BY 1`,
    );
    expect(perMonth.map(({ month }) => month.toISOString())).to.deep.equal(months.slice(0, -1).map((m) => m.toISOString()));
    // evenly: a month's share follows its length, 28 to 31 days of 365
    for (const { month, bets } of perMonth) expect(bets, month.toISOString()).to.be.within((BETS / 12) * 0.85, (BETS / 12) * 1.15);
    const [totals] = await read<{ bets: number; settled: number; operators: number; sessions: number; rounds: number; held: number }>(
      `SELECT (SELECT count(*)::int FROM bets) AS bets, (SELECT count(*)::int FROM bets WHERE status = 'SETTLED' AND settled_at IS NOT NULL) AS settled,
              (SELECT count(DISTINCT operator_id)::int FROM bets) AS operators, (SELECT count(DISTINCT session_id)::int FROM bets) AS sessions,
              (SELECT count(*)::int FROM rounds r JOIN bets b ON b.id = r.bet_id AND b.round_id = r.id AND r.state = 'SETTLED') AS rounds,
              (SELECT count(*)::int FROM pending_round_bets p JOIN bets b ON b.id = p.bet_id AND b.round_id = p.round_id AND p.state = 'RESOLVED') AS held`,
    );
    expect(totals).to.deep.include({ bets: BETS, settled: BETS, operators: HISTORY_OPERATORS, rounds: BETS, held: BETS });
    expect(totals!.sessions).to.be.above(100);
    // no live state: no session active, no round unsettled, no wallet job open
    const [open] = await read<{ sessions: number; rounds: number; jobs: number; cycles: number }>(
      `SELECT (SELECT count(*)::int FROM sessions WHERE state = 'ACTIVE') AS sessions, (SELECT count(*)::int FROM rounds WHERE NOT settled) AS rounds,
              (SELECT count(*)::int FROM wallet_jobs WHERE completed_at IS NULL) AS jobs, (SELECT count(*)::int FROM cycles WHERE phase <> 'FINISHED') AS cycles`,
    );
    expect(open).to.deep.equal({ sessions: 0, rounds: 0, jobs: 0, cycles: 0 });
    // D36: the seeding skips foreign-key checks, so the rows' partition key is checked here:
    // each bet, round and held stake carries its cycle's start, and sits in that month's partition
    const [misplaced] = await read<{ bets: number; rounds: number; held: number }>(
      `SELECT (SELECT count(*)::int FROM bets b LEFT JOIN cycles c ON c.id = b.cycle_id AND c.created_at = b.cycle_created_at WHERE c.id IS NULL) AS bets,
              (SELECT count(*)::int FROM rounds r JOIN bets b ON b.id = r.bet_id WHERE r.cycle_created_at <> b.cycle_created_at) AS rounds,
              (SELECT count(*)::int FROM pending_round_bets p JOIN bets b ON b.id = p.bet_id WHERE p.cycle_created_at <> b.cycle_created_at) AS held`,
    );
    expect(misplaced).to.deep.equal({ bets: 0, rounds: 0, held: 0 });
    // D1: each round's nonce is its seed's, in order, and the seed's next nonce follows the last
    const seeds = await read<{ wrong: number }>(
      `SELECT count(*)::int AS wrong FROM seeds s
       JOIN (SELECT seed_id, count(*) AS rounds, max(nonce) AS last FROM rounds GROUP BY seed_id) r ON r.seed_id = s.id
       WHERE s.next_nonce <> r.rounds OR r.last <> r.rounds - 1`,
    );
    expect(seeds[0]!.wrong).to.equal(0);
  });

  it('has a debit audit row for every bet and, for every winning bet, its credit, its completed win job and the payout of contract 8.4', async () => {
    type Row = {
      side: string;
      outcome_side: string;
      amount_micro: bigint;
      payout_micro: bigint;
      bet_transaction_uuid: string;
      win_transaction_uuid: string | null;
      debit: string;
      debit_answer: string;
      win: string | null;
      win_answer: string | null;
      job: { payload: Record<string, string>; completed: boolean } | null;
    };
    const rows = await read<Row>(
      `SELECT b.side, r.outcome_side, b.amount_micro::text AS amount_micro, b.payout_micro::text AS payout_micro, b.bet_transaction_uuid,
              b.win_transaction_uuid, d.request_body AS debit, d.response_body AS debit_answer, w.request_body AS win,
              w.response_body AS win_answer,
              (SELECT jsonb_build_object('payload', j.payload, 'completed', j.completed_at IS NOT NULL) FROM wallet_jobs j
               WHERE j.bet_id = b.id AND j.purpose = 'win') AS job
       FROM bets b JOIN rounds r ON r.id = b.round_id
       JOIN wallet_calls d ON d.transaction_uuid = b.bet_transaction_uuid AND d.endpoint = 'bet'
       LEFT JOIN wallet_calls w ON w.transaction_uuid = b.win_transaction_uuid AND w.endpoint = 'win'`,
    );
    expect(rows).to.have.length(BETS);
    const won = rows.filter((row) => row.side === row.outcome_side);
    // about half win (LOW and HIGH weigh the same)
    expect(won.length).to.be.within(BETS * 0.4, BETS * 0.6);
    for (const row of rows) {
      const debit = JSON.parse(row.debit) as Record<string, string>;
      expect(debit).to.include({ transactionUuid: row.bet_transaction_uuid, amountMicro: String(row.amount_micro), currency: 'EUR', gameCode: 'dice' });
      expect(JSON.parse(row.debit_answer)).to.include({ status: 'RS_OK', requestUuid: debit.requestUuid });
      const amount = BigInt(row.amount_micro);
      expect(amount >= 10_000n && amount <= 10_000_000n, String(amount)).to.equal(true);
      if (row.side !== row.outcome_side) {
        expect(row.payout_micro).to.equal('0');
        expect([row.win_transaction_uuid, row.win, row.job]).to.deep.equal([null, null, null]);
        continue;
      }
      const net = payout({ stakeMicro: amount, multiplierScaled: 200_000n, commissionMicro: 3_000n }).netMicro;
      expect(row.payout_micro).to.equal(net.toString());
      const { requestUuid, ...fields } = JSON.parse(row.win!) as Record<string, string>;
      expect(fields).to.deep.equal({ ...row.job!.payload });
      expect(fields).to.include({ transactionUuid: row.win_transaction_uuid, referenceTransactionUuid: row.bet_transaction_uuid, amountMicro: net.toString() });
      expect(JSON.parse(row.win_answer!)).to.include({ status: 'RS_OK', requestUuid });
      expect(row.job!.completed).to.equal(true);
    }
  });

  it('reuses the template on the next run', async () => {
    const out = path.join(dir, 'second.json');
    const run = await runBench('--smoke', '--history', String(BETS), '--out', out);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.include(`history: reusing template ${template}`);
    expect(run.stderr).not.to.include('seeded with');
    const report = JSON.parse(await readFile(out, 'utf8')) as Report;
    expect(report.run.history).to.include({ bets: BETS, template, reused: true });
    expect(run.stdout).to.include('by an earlier run, reused');
    expect(report.failures.total, JSON.stringify(report.failures.byKind)).to.equal(0);
  });
});
