import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import type { Command } from 'commander';
import { verifyRoundProof } from '../../shared/domain/games/proofs.js';
import { FailedAnswer, UsageError, type Action, type Values } from '../kit.js';

// `rgs verify` (contract 2.11, D2): a round's proof checked offline, by its game's module (D39:
// dice's die, crash's crash point and cash-out, D40).

export function verifyCommand(program: Command, action: Action): void {
  // contract 2.11, D2: checks a proof offline, with no database
  action(
    program
      .command('verify')
      .description('check a proof of GET /v1/rounds/{id}/proof offline; exit 0 when valid, 1 when not')
      .option('--proof <file>', 'the proof as JSON; - or left out: stdin'),
    async (values) => {
      const verdict = verifyRoundProof(await readProof(values.proof));
      return verdict.valid ? verdict : new FailedAnswer(verdict);
    },
  );

}

async function readProof(file: Values[string]): Promise<unknown> {
  const source = typeof file === 'string' && file !== '-' ? file : 'stdin';
  let proofText: string;
  try {
    proofText = source === 'stdin' ? await text(process.stdin) : await readFile(source, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the proof from ${source}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(proofText);
  } catch {
    throw new UsageError(`the proof in ${source} is not JSON`);
  }
}
