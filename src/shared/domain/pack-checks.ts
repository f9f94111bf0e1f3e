// What every game's checks of a dispute pack's content share (D32): the files as the verifier
// read them, the two ways proof.json says there is no proof to check, and the check that the
// win calls carried the payout. The pack's structure (manifest, signature, hashes) is
// dispute-pack.ts's; the checks that recompute a game are its module's (D39: packChecks).

export type PackCheck = { name: string; ok: boolean; detail?: unknown };

// proof.json while the seed is in use (contract 2.11, D2: it is revealed once retired)
export const SEED_NOT_REVEALED = 'seed_not_revealed';
// proof.json of a round voided before its outcome was derived, or of a bet refused at the
// wallet (D22): there is no outcome to prove (contract 2.11 answers round_not_settled)
export const NO_OUTCOME = 'no_outcome';

// The pack's content as the verifier parsed it: round.json (a JSON object), its one bet (when
// bets.json holds exactly one), and the other files as parsed (undefined when not JSON).
export type PackFacts = {
  // the manifest's roundId
  roundId: string | null;
  round: Record<string, unknown>;
  bet: Record<string, unknown> | undefined;
  proof: unknown;
  sheet: unknown;
  walletCalls: unknown;
};

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

// a MicroAmount as the pack writes it (D18: a decimal string, at most 20 digits)
export const MICRO = /^(0|[1-9][0-9]{0,19})$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export function parseJson(bytes: Uint8Array | undefined): { ok: true; value: unknown } | { ok: false } {
  if (!bytes) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(Buffer.from(bytes).toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

// The proof check of a pack whose proof.json says there is nothing to recompute (D32): the seed
// not yet revealed, or no outcome (only a voided round without one, `hasOutcome` false); undefined
// when proof.json is a proof, to be checked by its game.
export function unprovenCheck(proof: unknown, round: Record<string, unknown>, hasOutcome: boolean): PackCheck | undefined {
  if (isRecord(proof) && proof.proofStatus === SEED_NOT_REVEALED) {
    const ok = typeof proof.serverSeedHash === 'string' && SHA256_HEX.test(proof.serverSeedHash);
    return { name: 'proof', ok, detail: ok ? 'seed_not_revealed: the outcome is not recomputed' : 'proof.json must carry serverSeedHash' };
  }
  if (isRecord(proof) && proof.proofStatus === NO_OUTCOME) {
    const ok = !hasOutcome && round.state === 'VOIDED';
    return { name: 'proof', ok, detail: ok ? 'no_outcome: the round was voided before its outcome was derived' : 'only a voided round without an outcome has no proof' };
  }
  return undefined;
}

// the win calls carried the expected amount (contract 2.7); none expected for a lost bet.
// Undefined when the round made no win call.
export function winCallsCheck(walletCalls: unknown, won: boolean, expected: string): PackCheck | undefined {
  const wins = Array.isArray(walletCalls) ? walletCalls.filter((c) => isRecord(c) && c.endpoint === 'win') : [];
  if (wins.length === 0) return undefined;
  const amounts = wins
    .map((c) => parseJson(Buffer.from(String((c as Record<string, unknown>).requestBody ?? ''), 'utf8')))
    .map((parsed) => (parsed.ok && isRecord(parsed.value) ? parsed.value.amountMicro : undefined));
  const same = won && amounts.every((amount) => amount === expected);
  return { name: 'win_calls', ok: same, detail: same ? undefined : { expected: won ? expected : 'no win call for a lost bet', actual: amounts } };
}
