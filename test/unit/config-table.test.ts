import { expect } from 'chai';
import { readFileSync } from 'node:fs';

// README's configuration table names every environment variable src/shared/platform/config.ts
// reads, and only those: a variable added to the configuration without a row (or a row left
// behind by a removed one) fails here.

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const configSource = readFileSync(new URL('../../src/shared/platform/config.ts', import.meta.url), 'utf8');

function documented(): string[] {
  const section = /\n## Configuration\n([\s\S]*?)(?=\n## )/.exec(readme)?.[1];
  expect(section, 'README has a Configuration section').to.be.a('string');
  return [...section!.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]!);
}

function read(): string[] {
  const names = new Set<string>();
  // env.NAME, env['NAME'], and the helpers that read one variable by name
  for (const m of configSource.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g)) names.add((m[1] ?? m[2])!);
  for (const m of configSource.matchAll(/\b(?:integer|boolean|url|secret)\(\s*'([A-Z][A-Z0-9_]*)'/g)) names.add(m[1]!);
  return [...names];
}

describe('README configuration table', () => {
  it('finds the variables on both sides', () => {
    expect(read()).to.include.members(['DATABASE_URL', 'MASTER_KEY', 'NODE_ENV', 'BOT_CHALLENGE_TIMEOUT_MS']);
    expect(documented()).to.include('DATABASE_URL');
  });

  it('has one row for every variable src/shared/platform/config.ts reads, and no other', () => {
    const rows = documented();
    expect(rows.length, 'a variable listed twice').to.equal(new Set(rows).size);
    expect([...rows].sort()).to.deep.equal(read().sort());
  });
});
