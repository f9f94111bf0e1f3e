#!/usr/bin/env node
// The `rgs` command (DECISIONS D11). The project runs its TypeScript through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/rgs.ts');
process.exitCode = await main();
