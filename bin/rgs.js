#!/usr/bin/env node
// The `rgs` command (DECISIONS D11). A development checkout runs the TypeScript source
// through tsx, so that the tool never runs a build older than the source. A production
// install has no tsx (a devDependency, gone after `npm prune --omit=dev`) and runs the
// compiled code that `npm run build` wrote to dist/.
import { existsSync } from 'node:fs';

const SOURCE = new URL('../src/cli/rgs.ts', import.meta.url);
const BUILD = new URL('../dist/cli/rgs.js', import.meta.url);

async function tsxRegister() {
  try {
    return (await import('tsx/esm/api')).register;
  } catch (err) {
    if (err?.code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw err;
  }
}

let entry = BUILD;
if (existsSync(SOURCE)) {
  const register = await tsxRegister();
  if (register) {
    register();
    entry = SOURCE;
  }
}
if (entry === BUILD && !existsSync(BUILD)) {
  process.stderr.write(`${JSON.stringify({ error: 'no_build', message: 'rgs: dist/ has no build; run `npm run build` first' })}\n`);
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main();
