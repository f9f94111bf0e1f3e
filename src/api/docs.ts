import { writeFileSync } from 'node:fs';
import { buildOpenApi } from './openapi.js';
import { renderErrorCatalogue } from './error-catalogue.js';

// The generated documents and what produces each (paths from the repository root). Run this
// file to write them (`npm run docs`); test/unit/docs.test.ts checks the committed copies.
export const GENERATED_DOCS: Record<string, () => string> = {
  'docs/openapi.json': () => `${JSON.stringify(buildOpenApi(), null, 2)}\n`,
  'docs/errors.md': renderErrorCatalogue,
};

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [path, render] of Object.entries(GENERATED_DOCS)) {
    writeFileSync(new URL(`../../${path}`, import.meta.url), render());
    console.log(`wrote ${path}`);
  }
}
