import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { StateMachine } from '../../src/shared/domain/state-machine.js';

// Finds, in source text, every statement that writes bets.status or rounds.state: raw SQL
// in template literals (UPDATE … SET status = …, INSERT INTO … (…, status, …)), the Prisma
// calls on the bet and round models (update*, create*, upsert), and the SQL of a
// migration's functions (which run at runtime). For each it reads the states it writes
// (a literal, or a CASE's THEN/ELSE literals) and the states it moves from (its own
// `WHERE status = …`, `IN (…)`, `<>`, `NOT IN`, or Prisma's `where`). What it cannot read
// is a problem with its file and line: the state-writes test fails on it.

export type FoundWrite = {
  at: string; // file:line
  file: string;
  table: 'bets' | 'rounds';
  to: string[];
  // created: an INSERT or create; otherwise the states its own guard allows, or null (no guard of its own)
  created: boolean;
  from: string[] | null;
  // the whole statement (the template literal, or the Prisma call), where a guard of another part may be
  statement: string;
};

export type Scan = { writes: FoundWrite[]; problems: string[]; sqlSeen?: number };

const UPDATE_OF = /\bUPDATE\s+"?(bets|rounds)"?(?:\s+(?:AS\s+)?(?!SET\b)([A-Za-z_]\w*))?\s+SET\b/gi;
const INSERT_OF = /\bINSERT\s+INTO\s+"?(bets|rounds)"?\s*(\()?/gi;

type Machines = Record<'bets' | 'rounds', StateMachine<string>>;

const lineOf = (source: string, offset: number) => source.slice(0, offset).split('\n').length;

// The template literals of a TypeScript source, each as long as in the source (an
// interpolation becomes `?` and blanks, its newlines kept), with where its text starts.
export function templateLiterals(source: string): { text: string; offset: number }[] {
  const found: { text: string; offset: number }[] = [];
  let i = 0;
  const skipQuoted = (quote: string) => {
    i += 1;
    while (i < source.length && source[i] !== quote) i += source[i] === '\\' ? 2 : 1;
    i += 1;
  };
  const code = (untilBrace: boolean) => {
    let depth = 0;
    while (i < source.length) {
      const c = source[i]!;
      if (c === '/' && source[i + 1] === '/') {
        const end = source.indexOf('\n', i);
        i = end < 0 ? source.length : end;
      } else if (c === '/' && source[i + 1] === '*') {
        const end = source.indexOf('*/', i + 2);
        i = end < 0 ? source.length : end + 2;
      } else if (c === "'" || c === '"') skipQuoted(c);
      else if (c === '`') template();
      else {
        if (untilBrace && c === '{') depth += 1;
        if (untilBrace && c === '}') {
          if (depth === 0) {
            i += 1;
            return;
          }
          depth -= 1;
        }
        i += 1;
      }
    }
  };
  const template = () => {
    i += 1;
    const start = i;
    let text = '';
    while (i < source.length && source[i] !== '`') {
      if (source[i] === '\\') {
        text += source.slice(i, i + 2);
        i += 2;
      } else if (source[i] === '$' && source[i + 1] === '{') {
        const from = i;
        i += 2;
        code(true);
        text += source
          .slice(from, i)
          .replace(/[^\n]/g, ' ')
          .replace(/^ /, '?');
      } else {
        text += source[i];
        i += 1;
      }
    }
    i += 1;
    found.push({ text, offset: start });
  };
  code(false);
  return found;
}

// depth[i]: how many brackets enclose text[i] ('…' literals skipped)
function depths(text: string): number[] {
  const out = new Array<number>(text.length);
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote) {
      out[i] = depth;
      if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    if (c === ')' || c === ']' || c === '}') depth -= 1;
    out[i] = depth;
    if (c === '(' || c === '[' || c === '{') depth += 1;
  }
  return out;
}

// text split at the commas at its own depth
function splitTop(text: string): string[] {
  const d = depths(text);
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === ',' && d[i] === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

// the end of the bracket group that opens at text[open]
function closing(text: string, open: number): number {
  const d = depths(text);
  for (let i = open + 1; i < text.length; i += 1) if (d[i] === d[open] && ')]}'.includes(text[i]!)) return i;
  return text.length;
}

const literals = (text: string) => [...text.matchAll(/'([^']*)'/g)].map((m) => m[1]!);

// The states an expression written to the column can give: a literal, or a CASE whose
// every THEN and ELSE is one. Else a problem.
function written(expr: string, machine: StateMachine<string>): string[] | string {
  const e = expr.trim();
  let states: string[];
  if (/\bCASE\b/i.test(e)) {
    const branches = [...e.matchAll(/\b(?:THEN|ELSE)\s+(\S+)/gi)];
    const values = branches.map((m) => /^\(?'([^']*)'\)?/.exec(m[1]!)?.[1]);
    if (branches.length === 0 || values.some((v) => v === undefined)) return `writes ${e.replace(/\s+/g, ' ')}: a CASE branch is not a literal`;
    states = values as string[];
  } else {
    const literal = /^\(?'([^']*)'\)?(?:::\w+)?$/.exec(e);
    if (!literal) return `writes ${e.replace(/\s+/g, ' ')}: not a literal`;
    states = [literal[1]!];
  }
  const unknown = states.filter((s) => !machine.states.includes(s));
  if (unknown.length > 0) return `writes ${unknown.join(', ')}: not a state of ${machine.table}`;
  return [...new Set(states)];
}

// The states a guard (SQL or Prisma) names: `= 'X'`, `IN ('X', 'Y')`, or their negations.
function guarded(operator: string, operand: string, machine: StateMachine<string>): string[] | string {
  const names = literals(operand);
  const bare = operand.replace(/'[^']*'/g, '').replace(/[\s(),[\]]/g, '');
  if (names.length === 0 || bare !== '') return `its guard ${operator} ${operand} is not a list of literals`;
  const unknown = names.filter((s) => !machine.states.includes(s));
  if (unknown.length > 0) return `its guard names ${unknown.join(', ')}: not a state of ${machine.table}`;
  const negated = /^(<>|!=|NOT\s+IN|not)$/i.test(operator.trim());
  return negated ? machine.states.filter((s) => !names.includes(s)) : [...new Set(names)];
}

const intersect = (sets: string[][]) => sets.reduce((a, b) => a.filter((s) => b.includes(s)));

// The status writes of SQL text (a template literal's, or a migration function's body).
export function sqlWrites(file: string, source: string, sql: string, offset: number, machines: Machines, scan: Scan): void {
  const at = (index: number) => `${file}:${lineOf(source, offset + index)}`;
  const d = depths(sql);
  // a statement part ends at the bracket that closes its CTE, or at the end of the text
  const partEnd = (start: number) => {
    for (let i = start; i < sql.length; i += 1) if (d[i]! < d[start]! || (sql[i] === ';' && d[i] === d[start])) return i;
    return sql.length;
  };
  for (const m of sql.matchAll(UPDATE_OF)) {
    scan.sqlSeen = (scan.sqlSeen ?? 0) + 1;
    const table = m[1]!.toLowerCase() as 'bets' | 'rounds';
    const machine = machines[table];
    const alias = m[2] ?? table;
    const end = partEnd(m.index);
    const part = sql.slice(m.index, end);
    const pd = depths(part);
    const clause = (name: string) => {
      for (const k of part.matchAll(new RegExp(`\\b${name}\\b`, 'gi'))) if (pd[k.index] === 0) return k.index;
      return -1;
    };
    const setStart = m[0].length;
    const clauses = ['FROM', 'WHERE', 'RETURNING'].map(clause).filter((i) => i > setStart);
    const setEnd = clauses.length > 0 ? Math.min(...clauses) : part.length;
    const assignment = splitTop(part.slice(setStart, setEnd)).find((a) => new RegExp(`^(?:\\w+\\.)?"?${machine.column}"?\\s*=`, 'i').test(a));
    if (!assignment) continue;
    const to = written(assignment.slice(assignment.indexOf('=') + 1), machine);
    if (typeof to === 'string') {
      scan.problems.push(`${at(m.index)}: UPDATE ${table} ${to}`);
      continue;
    }
    const where = clause('WHERE');
    let from: string[] | null = null;
    if (where >= 0) {
      const returning = clause('RETURNING');
      const whereText = part.slice(where, returning > where ? returning : part.length);
      const wd = depths(whereText);
      const guards: string[][] = [];
      const guardRe = new RegExp(`(?:\\b(\\w+)\\.)?"?\\b${machine.column}"?\\s*(=|<>|!=|\\bNOT\\s+IN\\b|\\bIN\\b)\\s*(\\([^)]*\\)|'[^']*'|\\$\\d+\\S*)`, 'gi');
      const ours = (g: RegExpExecArray | RegExpMatchArray) => wd[g.index!] === 0 && (g[1] === undefined || g[1] === alias || g[1] === table);
      let read = 0;
      for (const g of whereText.matchAll(guardRe)) {
        if (!ours(g)) continue;
        read += 1;
        const states = guarded(g[2]!, g[3]!, machine);
        if (typeof states === 'string') scan.problems.push(`${at(m.index)}: UPDATE ${table}: ${states}`);
        else guards.push(states);
      }
      // any other condition on the column (ANY, a function, a CASE) is one it cannot read
      const mentioned = [...whereText.matchAll(new RegExp(`(?:\\b(\\w+)\\.)?"?\\b${machine.column}\\b`, 'gi'))].filter(ours).length;
      if (mentioned > read) scan.problems.push(`${at(m.index)}: UPDATE ${table}: a condition on ${machine.column} it cannot read`);
      if (guards.length > 0) from = intersect(guards);
    }
    scan.writes.push({ at: at(m.index), file, table, to, created: false, from, statement: sql });
  }
  for (const m of sql.matchAll(INSERT_OF)) {
    scan.sqlSeen = (scan.sqlSeen ?? 0) + 1;
    const table = m[1]!.toLowerCase() as 'bets' | 'rounds';
    const machine = machines[table];
    if (!m[2]) {
      scan.problems.push(`${at(m.index)}: INSERT INTO ${table} without a column list: its ${machine.column} cannot be read`);
      continue;
    }
    const open = m.index + m[0].length - 1;
    const close = closing(sql, open);
    const columns = splitTop(sql.slice(open + 1, close)).map((c) => c.replace(/"/g, '').toLowerCase());
    const index = columns.indexOf(machine.column);
    if (index < 0) continue;
    const rest = sql.slice(close + 1, partEnd(close + 1));
    const rd = depths(rest);
    let values: string | null = null;
    const select = /^\s*SELECT\b/i.exec(rest);
    const valuesMatch = /^\s*VALUES\s*\(/i.exec(rest);
    if (select) {
      const fromAt = [...rest.matchAll(/\bFROM\b/gi)].find((f) => rd[f.index] === 0)?.index ?? rest.length;
      values = rest.slice(select[0].length, fromAt);
    } else if (valuesMatch) {
      const vOpen = valuesMatch[0].length - 1;
      values = rest.slice(vOpen + 1, closing(rest, vOpen));
    }
    const expr = values === null ? undefined : splitTop(values)[index];
    if (expr === undefined) {
      scan.problems.push(`${at(m.index)}: INSERT INTO ${table}: the value of ${machine.column} cannot be found`);
      continue;
    }
    const to = written(expr, machine);
    if (typeof to === 'string') scan.problems.push(`${at(m.index)}: INSERT INTO ${table} ${to}`);
    else scan.writes.push({ at: at(m.index), file, table, to, created: true, from: null, statement: sql });
  }
}

// the value of key `name` at the top of a JS object literal's text ({ … }), or undefined
function property(object: string, name: string): string | undefined {
  const d = depths(object);
  for (const k of object.matchAll(new RegExp(`(?<![\\w.])${name}\\s*:\\s*`, 'g'))) {
    if (d[k.index] !== 1) continue;
    const start = k.index + k[0].length;
    let end = start;
    while (end < object.length && !(d[end] === 1 && object[end] === ',') && d[end]! >= 1) end += 1;
    return object.slice(start, end).trim();
  }
  return undefined;
}

// the source with its comments blanked (same length, newlines kept): an apostrophe in a
// comment would otherwise open a quote
function blankComments(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '/' && (source[i + 1] === '/' || source[i + 1] === '*')) {
      const line = source[i + 1] === '/';
      const found = line ? source.indexOf('\n', i) : source.indexOf('*/', i + 2);
      const end = found < 0 ? source.length : line ? found : found + 2;
      out += source.slice(i, end).replace(/[^\n]/g, ' ');
      i = end;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

// The status writes of Prisma calls on the bet and round models.
export function prismaWrites(file: string, original: string, machines: Machines, scan: Scan): void {
  const models = { bet: 'bets', round: 'rounds' } as const;
  const source = blankComments(original);
  for (const m of source.matchAll(/\.(bet|round)\.(create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|upsert)\s*\(/g)) {
    const table = models[m[1] as 'bet' | 'round'];
    const machine = machines[table];
    const at = `${file}:${lineOf(source, m.index)}`;
    const open = m.index + m[0].length - 1;
    const call = source.slice(open, closing(source, open) + 1);
    const arg = call.slice(1, -1).trim();
    const mentions = new RegExp(`\\b${machine.column}\\s*:`).test(arg);
    if (!arg.startsWith('{')) {
      scan.problems.push(`${at}: ${m[1]}.${m[2]} with an argument that is not an object literal`);
      continue;
    }
    if (m[2] === 'upsert') {
      if (mentions) scan.problems.push(`${at}: ${m[1]}.upsert writes ${machine.column}: list it as two writes, or classify it`);
      continue;
    }
    const data = property(arg, 'data');
    if (data === undefined || !data.startsWith('{')) {
      scan.problems.push(`${at}: ${m[1]}.${m[2]} whose data is not an object literal: its ${machine.column} cannot be read`);
      continue;
    }
    const value = property(data, machine.column);
    const dd = depths(data);
    const shorthand = [...data.matchAll(new RegExp(`(?<![\\w.])${machine.column}\\s*(?=[,}])`, 'g'))].some((k) => dd[k.index] === 1);
    if (shorthand) {
      scan.problems.push(`${at}: ${m[1]}.${m[2]} writes ${machine.column}: not a literal`);
      continue;
    }
    if (value === undefined) {
      if (/\.\.\./.test(data)) scan.problems.push(`${at}: ${m[1]}.${m[2]} spreads into its data: its ${machine.column} cannot be read`);
      continue;
    }
    const to = written(value, machine);
    if (typeof to === 'string') {
      scan.problems.push(`${at}: ${m[1]}.${m[2]} ${to}`);
      continue;
    }
    const created = m[2]!.startsWith('create');
    let from: string[] | null = null;
    const where = property(arg, 'where');
    const guard = where?.startsWith('{') ? property(where, machine.column) : undefined;
    if (!created && guard !== undefined) {
      const filter = /^\{\s*(in|notIn|not|equals)\s*:\s*([\s\S]*?)\s*,?\s*\}$/.exec(guard);
      const states = filter
        ? guarded(filter[1] === 'in' || filter[1] === 'equals' ? 'IN' : 'NOT IN', filter[2]!, machine)
        : guarded('=', guard, machine);
      if (typeof states === 'string') {
        scan.problems.push(`${at}: ${m[1]}.${m[2]}: ${states}`);
        continue;
      }
      from = states;
    }
    scan.writes.push({ at, file, table, to, created, from, statement: call });
  }
}

function filesUnder(dir: string, ending: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full, ending) : full.endsWith(ending) ? [full] : [];
  });
}

// Every status write of src/**/*.ts (the generated Prisma client aside) and of the
// migrations' functions, with paths relative to root.
export function scanStatusWrites(root: string, machines: Machines): Scan {
  const scan: Scan = { writes: [], problems: [] };
  const generated = path.join(root, 'src/shared/platform/db/generated');
  for (const full of filesUnder(path.join(root, 'src'), '.ts').filter((f) => !f.startsWith(generated))) {
    const file = path.relative(root, full);
    const source = readFileSync(full, 'utf8');
    const before = scan.sqlSeen ?? 0;
    for (const t of templateLiterals(source)) sqlWrites(file, source, t.text, t.offset, machines, scan);
    // every UPDATE or INSERT of bets or rounds in the file's code is one its template
    // literals gave: else the reading of the file went astray (a quote it misread)
    const code = blankComments(source);
    const inCode = [...code.matchAll(UPDATE_OF), ...code.matchAll(INSERT_OF)].length;
    const read = (scan.sqlSeen ?? 0) - before;
    if (inCode !== read) scan.problems.push(`${file}: ${inCode} UPDATE or INSERT of bets or rounds in its code, ${read} read in its template literals`);
    prismaWrites(file, source, machines, scan);
  }
  // a migration's one-off statements ran once (a partition copy moves no row between
  // states); its functions run with the service
  for (const full of filesUnder(path.join(root, 'prisma/migrations'), '.sql')) {
    const file = path.relative(root, full);
    const source = readFileSync(full, 'utf8');
    for (const body of source.matchAll(/\$\$([\s\S]*?)\$\$/g)) sqlWrites(file, source, body[1]!, body.index + 2, machines, scan);
  }
  return scan;
}
