import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { GAME_CODES, gameModule } from './games/index.js';
import { isRecord, parseJson, type PackCheck } from './pack-checks.js';
import { PROFILES } from './jurisdictions.js';

// The dispute pack (D32), pure: what its files are, the manifest that lists their hashes,
// its Ed25519 signature, and the whole check an auditor runs offline (`rgs verify-pack`).
// The service builds the files from its rows (game/evidence) and zips them; the verifier
// unzips and hands the files here with the service's published keys (GET /v1/keys).

export const PACK_VERSION = 1;
export const MANIFEST = 'manifest.json';
export const MANIFEST_SIGNATURE = 'manifest.sig';

// the files the manifest lists, in this order (D32)
export const PACK_FILES = ['round.json', 'bets.json', 'wallet-calls.json', 'proof.json', 'par-sheet.json'] as const;
export type PackFileName = (typeof PACK_FILES)[number];

export type ManifestEntry = { name: string; sha256: string };
export type Manifest = {
  packVersion: number;
  roundId: string;
  operatorId: string;
  createdAt: string;
  signingKeyId: string;
  files: ManifestEntry[];
};

// proof.json's two ways of saying there is no proof to check (the seed in use, no outcome)
export { NO_OUTCOME, SEED_NOT_REVEALED, type PackCheck } from './pack-checks.js';

// D32: the pack's files are JSON documents, two-space indented, with a final newline; the
// hashes and the signature cover these exact bytes, so an auditor needs no canonical form.
export const jsonBytes = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

export type PackContent = Record<PackFileName, unknown>;
export type SignedPack = { files: { name: string; bytes: Buffer }[]; manifest: Manifest };

// The pack's files, manifest and signature, ready to be archived: manifest.json first, then
// manifest.sig (the base64 Ed25519 signature of the manifest's bytes), then the listed files.
export function signedPack(
  meta: { roundId: string; operatorId: string; createdAt: Date },
  content: PackContent,
  key: { kid: string; privateKey: KeyObject },
): SignedPack {
  const listed = PACK_FILES.map((name) => ({ name, bytes: jsonBytes(content[name]) }));
  const manifest: Manifest = {
    packVersion: PACK_VERSION,
    roundId: meta.roundId,
    operatorId: meta.operatorId,
    createdAt: meta.createdAt.toISOString(),
    signingKeyId: key.kid,
    files: listed.map(({ name, bytes }) => ({ name, sha256: sha256(bytes) })),
  };
  const manifestBytes = jsonBytes(manifest);
  // Ed25519 takes no digest name (RFC 8032: the message itself is signed)
  const signature = sign(null, manifestBytes, key.privateKey).toString('base64');
  return {
    manifest,
    files: [{ name: MANIFEST, bytes: manifestBytes }, { name: MANIFEST_SIGNATURE, bytes: Buffer.from(signature, 'utf8') }, ...listed],
  };
}

// --- the service's public keys (GET /v1/keys) ---------------------------------------------

// RFC 8037: an Ed25519 public key as a JWK; x is the raw 32-byte key, base64url. D32: with
// the times that bound what it may sign (ISO 8601, UTC): a pack it signed is valid only if
// made at or after createdAt and before retiredAt; a revoked key (believed leaked) signs
// nothing valid, whatever the date a pack claims, since whoever holds it can backdate.
export type KeyValidity = { createdAt: string; retiredAt: string | null; revokedAt: string | null };
export type PublicJwk = { kty: 'OKP'; crv: 'Ed25519'; kid: string; x: string; use: 'sig'; alg: 'EdDSA' } & KeyValidity;
export type Jwks = { keys: PublicJwk[] };

export const publicJwk = (kid: string, x: string, validity: KeyValidity): PublicJwk => ({
  kty: 'OKP',
  crv: 'Ed25519',
  kid,
  x,
  use: 'sig',
  alg: 'EdDSA',
  createdAt: validity.createdAt,
  retiredAt: validity.retiredAt,
  revokedAt: validity.revokedAt,
});

// --- verification --------------------------------------------------------------------------

export type PackVerdict = { valid: boolean; roundId: string | null; signingKeyId: string | null; checks: PackCheck[] };

const SHA256_HEX = /^[0-9a-f]{64}$/;
// an Ed25519 signature is 64 bytes: 88 base64 characters, the last two '='
const SIGNATURE_BASE64 = /^[A-Za-z0-9+/]{86}==$/;
// a time as toISOString writes it (UTC, milliseconds optional)
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

// milliseconds since the epoch, or undefined when the value is not such a time
function instant(value: unknown): number | undefined {
  if (typeof value !== 'string' || !ISO_INSTANT.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function manifestProblems(manifest: unknown): string[] {
  if (!isRecord(manifest)) return ['the manifest must be a JSON object'];
  const problems: string[] = [];
  if (manifest.packVersion !== PACK_VERSION) problems.push(`packVersion must be ${PACK_VERSION}`);
  for (const field of ['roundId', 'operatorId', 'createdAt', 'signingKeyId']) {
    if (typeof manifest[field] !== 'string' || manifest[field] === '') problems.push(`${field} must be a non-empty string`);
  }
  if (typeof manifest.createdAt === 'string' && instant(manifest.createdAt) === undefined) problems.push('createdAt must be an ISO 8601 UTC time');
  const files = manifest.files;
  if (!Array.isArray(files) || !files.every((f) => isRecord(f) && typeof f.name === 'string' && typeof f.sha256 === 'string' && SHA256_HEX.test(f.sha256))) {
    return [...problems, 'files must be a list of {name, sha256} with lower-case hex SHA-256 digests'];
  }
  const names = files.map((f) => (f as ManifestEntry).name);
  if (names.length !== PACK_FILES.length || !PACK_FILES.every((name) => names.includes(name))) {
    problems.push(`files must list exactly ${PACK_FILES.join(', ')}`);
  }
  return problems;
}

// Why the key could not have signed a pack made at packCreatedAt, or undefined when it could
// (D32): the pack was made while the key was current, and the key is not revoked.
function validityProblem(jwk: PublicJwk, packCreatedAt: unknown): string | undefined {
  const { kid } = jwk;
  const createdAt = instant(jwk.createdAt);
  const retiredAt = jwk.retiredAt === null ? null : instant(jwk.retiredAt);
  const revoked = jwk.revokedAt === null ? null : instant(jwk.revokedAt);
  if (createdAt === undefined || retiredAt === undefined || revoked === undefined) {
    return `key ${kid} does not say when it was valid: the keys must carry createdAt, retiredAt and revokedAt as GET /v1/keys publishes them`;
  }
  // a leaked key can sign any date: nothing it signed is trusted
  if (revoked !== null) return `key ${kid} was revoked at ${jwk.revokedAt}: no pack signed by it is valid, whatever its date`;
  const madeAt = instant(packCreatedAt);
  if (madeAt === undefined) return 'the manifest\'s createdAt is not a time, so the key\'s validity cannot be checked';
  if (madeAt < createdAt) return `the pack says it was made at ${String(packCreatedAt)}, before key ${kid} existed (${jwk.createdAt})`;
  if (retiredAt !== null && madeAt >= retiredAt) {
    return `the pack says it was made at ${String(packCreatedAt)}, after key ${kid} was retired (${jwk.retiredAt}): a retired key signs no new pack`;
  }
  return undefined;
}

// The key the manifest names, and whether it could have signed this pack. The key is handed
// back even when it was not valid then, so that the signature is still checked and the
// report says both.
function keyCheck(jwks: Jwks, kid: string | null, packCreatedAt: unknown): { check: PackCheck; key?: KeyObject } {
  if (kid === null) return { check: { name: 'signing_key', ok: false, detail: 'the manifest names no signing key' } };
  const jwk = jwks.keys.find((key) => key.kid === kid);
  if (!jwk) return { check: { name: 'signing_key', ok: false, detail: `no published key has kid ${kid}` } };
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') {
    return { check: { name: 'signing_key', ok: false, detail: `key ${kid} is not an Ed25519 key (kty OKP, crv Ed25519)` } };
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  } catch {
    return { check: { name: 'signing_key', ok: false, detail: `key ${kid} is not a valid Ed25519 public key` } };
  }
  const problem = validityProblem(jwk, packCreatedAt);
  return { check: problem ? { name: 'signing_key', ok: false, detail: problem } : { name: 'signing_key', ok: true, detail: kid }, key };
}

// The whole check of a pack (D32): every file listed and hashed as the manifest says,
// nothing else in the archive, the manifest signed by a published key that was current when
// the pack says it was made and is not revoked, and the content
// consistent: the proof (when the seed is revealed) reproduces the outcome (contract 2.11,
// 2.12), the par sheet's return follows from its configuration, and the bet's payout from
// the outcome and the configuration (contract 8.4). Valid only when every check holds.
export function verifyPack(files: ReadonlyMap<string, Uint8Array>, jwks: Jwks): PackVerdict {
  const checks: PackCheck[] = [];
  const check = (name: string, ok: boolean, detail?: unknown) => checks.push(detail === undefined ? { name, ok } : { name, ok, detail });

  const manifestBytes = files.get(MANIFEST);
  const parsedManifest = parseJson(manifestBytes);
  const manifest = parsedManifest.ok ? parsedManifest.value : undefined;
  const problems = manifestBytes ? (parsedManifest.ok ? manifestProblems(manifest) : ['manifest.json is not JSON']) : ['the archive has no manifest.json'];
  check('manifest', problems.length === 0, problems.length ? problems : undefined);
  const record = isRecord(manifest) ? manifest : {};
  const kid = typeof record.signingKeyId === 'string' ? record.signingKeyId : null;
  const roundId = typeof record.roundId === 'string' ? record.roundId : null;

  // the signature first: it is what makes the manifest's hashes worth checking
  const { check: signingKey, key } = keyCheck(jwks, kid, record.createdAt);
  checks.push(signingKey);
  const signatureText = files.get(MANIFEST_SIGNATURE);
  const signature = signatureText ? Buffer.from(signatureText).toString('utf8') : '';
  if (!manifestBytes || !signatureText) check('signature', false, `the archive has no ${manifestBytes ? MANIFEST_SIGNATURE : MANIFEST}`);
  else if (!SIGNATURE_BASE64.test(signature)) check('signature', false, 'manifest.sig is not a base64 Ed25519 signature (64 bytes)');
  else if (!key) check('signature', false, 'no published key to check it with (see signing_key)');
  else {
    const ok = verify(null, manifestBytes, key, Buffer.from(signature, 'base64'));
    check('signature', ok, ok ? undefined : `the signature does not match the manifest under key ${kid}`);
  }

  // every listed file present with its hash; nothing unlisted
  const entries = Array.isArray(record.files) ? (record.files as unknown[]).filter(isRecord) : [];
  for (const name of PACK_FILES) {
    const entry = entries.find((e) => e.name === name);
    const bytes = files.get(name);
    if (!bytes) check(`sha256:${name}`, false, 'missing from the archive');
    else if (!entry) check(`sha256:${name}`, false, 'not listed in the manifest');
    else {
      const actual = sha256(bytes);
      check(`sha256:${name}`, actual === entry.sha256, actual === entry.sha256 ? undefined : { expected: entry.sha256, actual });
    }
  }
  // an entry the signed manifest does not name is not covered by the signature (D32)
  const named = new Set([MANIFEST, MANIFEST_SIGNATURE, ...entries.map((e) => e.name).filter((name) => (PACK_FILES as readonly unknown[]).includes(name))]);
  const unlisted = [...files.keys()].filter((name) => !named.has(name));
  check('archive_entries', unlisted.length === 0, unlisted.length ? { unlisted } : undefined);

  checks.push(...contentChecks(files, roundId));
  return { valid: checks.every((c) => c.ok), roundId, signingKeyId: kid, checks };
}

// D42: whether the bet was free, as bets.json says (isFree, bonusRef), is what its debits said
// (contract 2.6: isFree, and bonusRef only with it), and the round counts its stake as the
// reports do: 0 for a free bet, whose stake was not debited (contract 8.4). The payout checks
// read isFree from bets.json: this check is what holds it to the wallet calls.
export function freeBetCheck(round: Record<string, unknown>, bet: Record<string, unknown>, walletCalls: unknown): PackCheck {
  const free = bet.isFree === true;
  const problems: string[] = [];
  if (typeof bet.isFree !== 'boolean') problems.push('bets.json\'s bet must say isFree');
  const bonusRef = bet.bonusRef ?? null;
  if (free ? typeof bonusRef !== 'string' : bonusRef !== null) problems.push('bets.json\'s bonusRef must be the campaignRef of a free bet, null for a paid one');
  const stake = free ? '0' : bet.amountMicro;
  if (round.totalBetsMicro !== stake) problems.push(`round.json's totalBetsMicro must be ${free ? '0 for a free bet' : 'the bet\'s amountMicro'}`);
  const debits = Array.isArray(walletCalls) ? walletCalls.filter((c) => isRecord(c) && c.endpoint === 'bet') : [];
  for (const call of debits) {
    const parsed = parseJson(Buffer.from(String((call as Record<string, unknown>).requestBody ?? ''), 'utf8'));
    const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
    const sentFree = body.isFree === true;
    if (sentFree !== free) problems.push(`a debit was sent ${sentFree ? 'with' : 'without'} isFree, the bet says it was ${free ? 'free' : 'paid'}`);
    else if ((body.bonusRef ?? null) !== bonusRef) problems.push('a debit\'s bonusRef differs from the bet\'s');
  }
  return problems.length ? { name: 'free_bet', ok: false, detail: problems } : { name: 'free_bet', ok: true, detail: free ? `free: bonusRef ${String(bonusRef)}, stake counted 0` : 'paid' };
}

// D44: the jurisdiction profile round.json names, and the bet within its bound: it debited at
// most the profile's maxStakeMicro (a free bet's campaign stake too). A pack made before
// profiles existed names none, which is said, not failed.
export function jurisdictionCheck(round: Record<string, unknown>, bet: Record<string, unknown>): PackCheck {
  const named = round.jurisdiction;
  if (named === undefined) return { name: 'jurisdiction', ok: true, detail: 'no profile named: the pack was made before jurisdiction profiles' };
  const rules = isRecord(named) && isRecord(named.rules) ? named.rules : undefined;
  if (!isRecord(named) || typeof named.code !== 'string' || !(typeof named.profile === 'string' && Object.hasOwn(PROFILES, named.profile)) || !rules) {
    return { name: 'jurisdiction', ok: false, detail: "round.json's jurisdiction must name the code, a profile of the service and its rules" };
  }
  const max = rules.maxStakeMicro;
  const stake = typeof bet.amountMicro === 'string' && /^[0-9]{1,20}$/.test(bet.amountMicro) ? BigInt(bet.amountMicro) : null;
  if (max !== null && (typeof max !== 'string' || !/^[0-9]{1,20}$/.test(max) || stake === null || stake > BigInt(max))) {
    return { name: 'jurisdiction', ok: false, detail: `the bet must debit at most the profile's maxStakeMicro (${String(max)})` };
  }
  return { name: 'jurisdiction', ok: true, detail: `${named.code} under ${named.profile}` };
}

// What the files say, checked against one another and recomputed: the round and its bet here,
// the game's content by its module (D39), named by round.json or, failing that, the par sheet.
function contentChecks(files: ReadonlyMap<string, Uint8Array>, roundId: string | null): PackCheck[] {
  const checks: PackCheck[] = [];
  const check = (name: string, ok: boolean, detail?: unknown) => checks.push(detail === undefined ? { name, ok } : { name, ok, detail });
  const read = (name: PackFileName) => {
    const parsed = parseJson(files.get(name));
    return parsed.ok ? parsed.value : undefined;
  };
  const round = read('round.json');
  const bets = read('bets.json');
  const sheet = read('par-sheet.json');
  const unreadable = (['round.json', 'bets.json', 'wallet-calls.json', 'proof.json', 'par-sheet.json'] as const).filter((n) => read(n) === undefined);
  check('json', unreadable.length === 0, unreadable.length ? { notJson: unreadable } : undefined);

  // the round: the manifest's, and finished (D32: a pack is made for terminal rounds only)
  const roundOk = isRecord(round) && round.roundId === roundId && (round.state === 'SETTLED' || round.state === 'VOIDED');
  check('round', roundOk, roundOk ? undefined : 'round.json must be the manifest\'s round, SETTLED or VOIDED');
  if (!isRecord(round)) return checks;
  const bet = Array.isArray(bets) && bets.length === 1 && isRecord(bets[0]) ? bets[0] : undefined;
  check('bets', bet !== undefined, bet ? undefined : 'bets.json must hold the round\'s one bet (D1)');
  if (bet) checks.push(freeBetCheck(round, bet, read('wallet-calls.json')), jurisdictionCheck(round, bet));

  const gameCode = typeof round.gameCode === 'string' ? round.gameCode : isRecord(sheet) ? sheet.gameCode : undefined;
  const module = typeof gameCode === 'string' ? gameModule(gameCode) : undefined;
  if (!module) {
    check('par_sheet', false, `the pack names no game of this service (${GAME_CODES.join(', ')}): its content cannot be recomputed`);
    return checks;
  }
  checks.push(...module.rounds.packChecks({ roundId, round, bet, proof: read('proof.json'), sheet, walletCalls: read('wallet-calls.json') }));
  return checks;
}
