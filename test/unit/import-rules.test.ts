import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// The import rules of docs/architecture.md "Layout" (.dependency-cruiser.cjs, P14): no
// import cycles; roles never import each other or the process wiring; src/shared imports
// neither, and its layers import only downwards (domain <- platform <- wallet <- game); a
// client package under clients/ imports nothing of the service. The same check as `npm run
// depcheck`, run in the suite so a broken rule fails `npm test`.
describe('import rules (.dependency-cruiser.cjs)', function () {
  // cruising parses every source file with the TypeScript compiler
  this.timeout(120_000);

  let result: ICruiseResult;
  before(async () => {
    // mocha runs from the repository root, as npm does
    const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
    const tsConfig = extractTSConfig('tsconfig.json');
    // the roots of `npm run depcheck`
    const { output } = await cruise(['{src,bench,clients}'], options, {}, { tsConfig });
    result = output as ICruiseResult;
  });

  it('cruises the sources with their imports resolved', () => {
    const main = result.modules.find((m) => m.source === 'src/main.ts');
    expect(main, 'src/main.ts was not cruised').to.not.equal(undefined);
    // `.js` specifiers resolved to the `.ts` files (else every rule would pass vacuously)
    expect(main!.dependencies.map((d) => d.resolved)).to.include('src/roles.ts');
    // the operator client is cruised too (rule clients-stand-alone)
    expect(result.modules.some((m) => m.source === 'clients/typescript/index.ts'), 'clients/ was not cruised').to.equal(true);
  });

  it('finds no violation', () => {
    const violations = result.summary.violations;
    expect(violations.length, `\n${violations.map(describeViolation).join('\n')}\n`).to.equal(0);
  });
});

// The layout the rules assume: a folder per role, the four layers under src/shared and
// nothing else there, the wiring as files directly under src/. A folder added elsewhere
// would be in no layer, and no rule would hold it.
describe('the layout (P14)', () => {
  const folders = (dir: string) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();

  it('src holds the roles, the shared layers and the wiring', () => {
    expect(folders('src')).to.deep.equal(['api', 'cli', 'realtime', 'shared', 'simulator', 'workers']);
    const wiring = readdirSync('src', { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);
    expect(wiring.sort()).to.deep.equal(['bootstrap.ts', 'demo.ts', 'main.ts', 'roles.ts', 'sandbox.ts']);
  });

  it('src/shared holds the four layers and no file of its own', () => {
    expect(folders('src/shared')).to.deep.equal(['domain', 'game', 'platform', 'wallet']);
    expect(readdirSync('src/shared', { withFileTypes: true }).filter((entry) => entry.isFile())).to.deep.equal([]);
  });
});

// The rules themselves, against a tree of deliberately misplaced imports: each rule must
// name the import it exists to forbid (a rule whose path no longer matches the layout would
// otherwise pass every tree, this repository's included).
describe('the import rules refuse misplaced imports', function () {
  this.timeout(120_000);

  const MISPLACED: Record<string, { file: string; imports: string }> = {
    'roles-never-import-roles': { file: 'src/api/routes.ts', imports: '../realtime/server' },
    'roles-never-import-the-wiring': { file: 'src/workers/pools.ts', imports: '../bootstrap' },
    'shared-never-imports-roles-or-wiring': { file: 'src/shared/game/bets.ts', imports: '../../workers/registry' },
    'domain-is-pure': { file: 'src/shared/domain/dice.ts', imports: '../platform/config' },
    'platform-is-below-wallet-and-game': { file: 'src/shared/platform/queues.ts', imports: '../game/ticket' },
    'wallet-is-below-game': { file: 'src/shared/wallet/outbound.ts', imports: '../game/settings' },
  };
  let violations: IViolation[];
  before(async () => {
    const base = mkdtempSync(join(tmpdir(), 'rgs-import-rules-'));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(dirname(join(base, file)), { recursive: true });
        writeFileSync(join(base, file), text);
      };
      for (const { file, imports } of Object.values(MISPLACED)) {
        write(file, `import { x } from '${imports}';\nexport const y = x;\n`);
        write(join(dirname(file), `${imports}.ts`), 'export const x = 1;\n');
      }
      const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
      const { output } = await cruise(['src'], { ...options, baseDir: base }, {}, {});
      violations = (output as ICruiseResult).summary.violations;
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  for (const [rule, { file, imports }] of Object.entries(MISPLACED)) {
    it(`${rule}: ${file} importing ${imports}`, () => {
      const named = violations.filter((v) => v.rule.name === rule).map((v) => `${v.from} → ${v.to}`);
      expect(named).to.include(`${file} → ${join(dirname(file), `${imports}.ts`)}`);
    });
  }

  it('names nothing else', () => {
    const rules = new Set(violations.map((v) => v.rule.name));
    expect([...rules].sort()).to.deep.equal(Object.keys(MISPLACED).sort());
  });
});

// D11: the rgs command line parses, calls and prints; the realtime role wires sockets and
// pages to game functions (D4). The rule cli-reaches-the-database-through-game-and-platform
// keeps the Prisma client and the SQL helper out of the CLI's imports; this keeps out of
// both what needs no import: a Prisma model call on the database handle they are given, or
// a statement written in them. Their queries live in the game and platform layers.
for (const folder of ['src/cli', 'src/realtime']) {
  describe(`${folder} holds no query`, () => {
    const QUERIES: [string, RegExp][] = [
      ['a Prisma model call', /\.\s*(findUnique|findUniqueOrThrow|findFirst|findFirstOrThrow|findMany|create|createMany|createManyAndReturn|update|upsert|updateMany|delete|deleteMany|count|aggregate|groupBy)\s*\(\s*\{/],
      ['a raw Prisma query', /\$(queryRaw|executeRaw|queryRawUnsafe|executeRawUnsafe)\b/],
      ['a statement of the SQL helper', /\.query\s*[(<]/],
      ['SQL', /\b(SELECT\s+[\w*]|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|LOCK\s+TABLE)\b/],
    ];

    it(`finds neither a Prisma query nor SQL in any TypeScript file of ${folder}`, () => {
      const files = readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
      expect(files, `${folder} was not read`).to.not.be.empty;
      const found = files.flatMap((file) => {
        const source = readFileSync(join(folder, file), 'utf8');
        return QUERIES.filter(([, pattern]) => pattern.test(source)).map(([what]) => `${folder}/${file}: ${what}`);
      });
      expect(found, `\n${found.join('\n')}\n`).to.deep.equal([]);
    });
  });
}

// one line per rule broken; a cycle is spelled out file by file, its type-only imports marked
function describeViolation(v: IViolation): string {
  if (!v.cycle) return `${v.rule.name}: ${v.from} → ${v.to}`;
  const steps = v.cycle.map((step) => ` → ${step.dependencyTypes.includes('type-only') ? '(type-only) ' : ''}${step.name}`);
  return `${v.rule.name}: ${v.from}${steps.join('')}`;
}
