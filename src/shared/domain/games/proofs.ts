import { commonShapeProblems, type ProofVerdict } from '../proof.js';
import { GAME_MODULES, gameModule } from './index.js';
import type { AnyGameModule } from './types.js';

// A round's proof checked by its game (contract 2.11; D39: the verifier asks the module, never
// names a game): `rgs verify` and the dispute pack's verifier. The game is the proof's
// gameCode, or failing that the game whose rngVersion it names (2.11: the derivation a
// verifier must run).

export function proofGame(body: unknown): AnyGameModule | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { gameCode, rngVersion } = body as Record<string, unknown>;
  return (typeof gameCode === 'string' ? gameModule(gameCode) : undefined) ?? GAME_MODULES.find((module) => module.rngVersion === rngVersion);
}

export function verifyRoundProof(body: unknown): ProofVerdict<unknown> {
  const module = proofGame(body);
  if (module) return module.rounds.verifyProof(body);
  const games = GAME_MODULES.map((m) => `${m.gameCode} (${m.rngVersion})`).join(', ');
  const problems = [...commonShapeProblems(body), `gameCode or rngVersion must name a game of this service: ${games}`];
  return { valid: false, checks: [{ name: 'shape', ok: false, actual: problems }] };
}
