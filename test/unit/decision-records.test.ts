import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

// The decisions the code cites (`D24` in a comment) are explained in docs/decisions/, one
// record per number. A reader holding only this repository must be able to look up every
// citation, so a D<n> cited anywhere in the sources, the tests or the documentation without
// a record fails here, as does a record the index (docs/decisions/README.md) does not list,
// or lists under another title or status.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DECISIONS = path.join(ROOT, 'docs/decisions');

// where citations are looked for, and in which files; the generated Prisma client is not ours
const SEARCHED = ['src', 'prisma', 'test', 'bench', 'docs', 'README.md'];
const CITING_FILE = /\.(ts|js|mjs|cjs|html|css|sql|prisma|md)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'generated']);

const CITATION = /\bD(\d{1,2})\b/g;
const RECORD_FILE = /^([DP])(\d{2})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;
const STATUS = /^(accepted|accepted, with a deviation|accepted, (partly|not yet) implemented(, with a deviation)?|superseded by [DP]\d{1,2})$/;

function filesUnder(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (statSync(full).isFile()) return CITING_FILE.test(entry) ? [entry] : [];
  return readdirSync(full, { withFileTypes: true }).flatMap((child) => {
    if (child.isDirectory()) return SKIPPED_DIRS.has(child.name) ? [] : filesUnder(path.join(entry, child.name));
    return CITING_FILE.test(child.name) ? [path.join(entry, child.name)] : [];
  });
}

type DecisionRecord = { file: string; kind: 'D' | 'P'; number: number; title: string; status: string; text: string };

function readRecords(): DecisionRecord[] {
  return readdirSync(DECISIONS)
    .filter((file) => file !== 'README.md')
    .map((file) => {
      const match = RECORD_FILE.exec(file);
      expect(match, `docs/decisions/${file} is named D<nn>-<slug>.md or P<nn>-<slug>.md`).to.not.equal(null);
      const text = readFileSync(path.join(DECISIONS, file), 'utf8');
      const heading = /^# ([DP])(\d{1,2})\. (.+)\n/.exec(text);
      expect(heading, `${file} starts with "# ${match![1]}${Number(match![2])}. <title>"`).to.not.equal(null);
      const status = /^- \*\*Status:\*\* (.+)$/m.exec(text);
      expect(status, `${file} has a "- **Status:**" line`).to.not.equal(null);
      return {
        file,
        kind: match![1] as 'D' | 'P',
        number: Number(match![2]),
        title: heading![3]!,
        status: status![1]!,
        text,
        headingNumber: `${heading![1]}${Number(heading![2])}`,
      };
    })
    .map(({ headingNumber, ...record }) => {
      expect(headingNumber, `${record.file}: the heading names the file's number`).to.equal(`${record.kind}${record.number}`);
      return record;
    });
}

describe('decision records (docs/decisions)', () => {
  const records = readRecords();
  const decisions = new Map(records.filter((r) => r.kind === 'D').map((r) => [r.number, r]));

  it('each number has one record', () => {
    const numbers = records.map((r) => `${r.kind}${r.number}`);
    expect(numbers.filter((n, i) => numbers.indexOf(n) !== i), 'numbers with two records').to.deep.equal([]);
  });

  it('every D<n> cited in the sources, tests and documentation has a record', () => {
    const missing = new Map<string, string[]>();
    for (const file of SEARCHED.flatMap(filesUnder)) {
      for (const [, number] of readFileSync(path.join(ROOT, file), 'utf8').matchAll(CITATION)) {
        if (decisions.has(Number(number))) continue;
        missing.set(`D${number}`, [...(missing.get(`D${number}`) ?? []), file]);
      }
    }
    expect(Object.fromEntries(missing), 'cited without a record in docs/decisions').to.deep.equal({});
  });

  it('every record has a valid status, a Context, a Decision and Consequences', () => {
    for (const record of records) {
      expect(record.status, `${record.file}: status`).to.match(STATUS);
      for (const section of ['Context', 'Decision', 'Consequences']) {
        expect(record.text, `${record.file}: section ${section}`).to.match(new RegExp(`^## ${section}$`, 'm'));
      }
      if (record.status.includes('deviation')) {
        expect(record.text, `${record.file}: a deviation is explained`).to.match(/^## Where the product differs$/m);
      }
    }
  });

  it('records stand on their own: they name no path outside the repository and no issue number', () => {
    for (const record of records) {
      expect(record.text, `${record.file}`).to.not.match(/\.\.\/shared|\bissue[ -]?#?\d+|(^|\s)#\d+\b/im);
    }
  });

  it('the index lists every record, with the title and status of its record', () => {
    const index = readFileSync(path.join(DECISIONS, 'README.md'), 'utf8');
    const rows = [...index.matchAll(/^\| \[([DP]\d{1,2})\]\(([^)]+)\) \| (.+) \| (.+) \|$/gm)].map(([, number, file, title, status]) => ({
      number,
      file,
      title,
      status,
    }));
    expect(rows.map((row) => row.file), 'the files the index links, in order').to.deep.equal(records.map((r) => r.file));
    for (const record of records) {
      const row = rows.find((r) => r.file === record.file)!;
      expect(row, record.file).to.deep.equal({ number: `${record.kind}${record.number}`, file: record.file, title: record.title, status: record.status });
    }
  });

  it('every D<n> and P<n> a record cites has a record of its own', () => {
    const known = new Set(records.map((r) => `${r.kind}${r.number}`));
    for (const record of records) {
      for (const [cited] of record.text.matchAll(/\b[DP]\d{1,2}\b/g)) {
        expect(known.has(cited), `${record.file} cites ${cited}`).to.equal(true);
      }
    }
  });
});
