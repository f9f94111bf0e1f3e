import { readFile, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { verifyPack, type Jwks, type PackVerdict } from '../../shared/domain/dispute-pack.js';
import { FailedAnswer, UsageError, required, type Action } from '../kit.js';
import { ArchiveError, MAX_TOTAL_BYTES, unzipFiles } from '../../shared/game/evidence/archive.js';

// `rgs verify-pack FILE --keys URL|FILE` (D32): a dispute pack checked offline, without the
// database: every hash, the signature under the service's published keys, and, when the
// seed is revealed, the outcome and the payout (domain/dispute-pack.ts).
//
// --keys is required. A pack does not say which service made it, and a key carried by the
// pack itself would prove nothing: the auditor names the keys they trust, the service's
// GET /v1/keys, or a copy of it saved earlier (a JWKS file), which is how it runs offline.

// a problem with the command line or its inputs (exit 2), not a verdict on the pack
export class VerifyPackUsageError extends Error {
  override name = 'VerifyPackUsageError';
}

// a JWKS is a few hundred bytes per key; more than this is not one. A URL's body is read as
// it arrives and dropped at this size: the server is whoever the auditor named, and must not
// be able to fill the verifier's memory (D24).
export const MAX_KEYS_BYTES = 1024 * 1024;
const KEYS_TIMEOUT_MS = 10_000;
// a pack is a few KiB compressed; its entries together may not exceed MAX_TOTAL_BYTES
// inflated, and a ZIP is not larger than its entries by more than its directory
const MAX_PACK_BYTES = MAX_TOTAL_BYTES;

export async function verifyPackFile(file: string, keysSource: string): Promise<PackVerdict> {
  const keys = await readKeys(keysSource);
  let archive: Buffer;
  try {
    if ((await stat(file)).size > MAX_PACK_BYTES) throw new VerifyPackUsageError(`the pack ${file} is larger than ${MAX_PACK_BYTES} bytes: not a dispute pack`);
    archive = await readFile(file);
  } catch (err) {
    if (err instanceof VerifyPackUsageError) throw err;
    throw new VerifyPackUsageError(`cannot read the pack ${file}: ${(err as Error).message}`);
  }
  let files: Map<string, Uint8Array>;
  try {
    files = unzipFiles(archive);
  } catch (err) {
    if (!(err instanceof ArchiveError)) throw err;
    return { valid: false, roundId: null, signingKeyId: null, checks: [{ name: 'archive', ok: false, detail: err.message }] };
  }
  const verdict = verifyPack(files, keys);
  return { ...verdict, checks: [{ name: 'archive', ok: true }, ...verdict.checks] };
}

async function readKeys(source: string): Promise<Jwks> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    let response: Response;
    try {
      response = await fetch(source, { signal: AbortSignal.timeout(KEYS_TIMEOUT_MS), redirect: 'follow' });
    } catch (err) {
      throw new VerifyPackUsageError(`cannot fetch the keys from ${source}: ${(err as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new VerifyPackUsageError(`the keys at ${source} answered HTTP ${response.status}`);
    }
    text = await cappedText(response, source);
  } else {
    try {
      if ((await stat(source)).size > MAX_KEYS_BYTES) throw new VerifyPackUsageError(`the keys from ${source} are larger than a JWKS can be (${MAX_KEYS_BYTES} bytes)`);
      text = await readFile(source, 'utf8');
    } catch (err) {
      if (err instanceof VerifyPackUsageError) throw err;
      throw new VerifyPackUsageError(`cannot read the keys from ${source}: ${(err as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new VerifyPackUsageError(`the keys from ${source} are not JSON`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'object' && key !== null && typeof (key as { kid?: unknown }).kid === 'string')) {
    throw new VerifyPackUsageError(`the keys from ${source} are not a JWKS ({keys: [{kid, kty, crv, x, ...}]})`);
  }
  return parsed as Jwks;
}

// The body read chunk by chunk, the download cancelled as soon as it passes MAX_KEYS_BYTES
// (a declared Content-Length above it is refused before any byte is read)
async function cappedText(response: Response, source: string): Promise<string> {
  const tooLarge = () => new VerifyPackUsageError(`the keys from ${source} are larger than a JWKS can be (${MAX_KEYS_BYTES} bytes)`);
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_KEYS_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_KEYS_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof VerifyPackUsageError) throw err;
    throw new VerifyPackUsageError(`cannot fetch the keys from ${source}: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const VERIFY_PACK_HELP = `
--keys is required: a pack does not say which service made it, and keys it carried itself
would prove nothing. Give the service's GET /v1/keys URL, or a copy of it saved earlier to
verify with no network at all. Exit 0: every check holds; 1: a check failed (its name and
detail are in the report); 2: the file or the keys could not be read.

Example:
  curl -s https://rgs.example.com/v1/keys > keys.json
  rgs verify-pack dispute-pack-<roundId>.zip --keys keys.json`;

export function verifyPackCommand(program: Command, action: Action): void {
  // D32: checks a dispute pack offline, with no database
  action(
    program
      .command('verify-pack')
      .description('check a dispute pack offline; prints each check, exit 0 only when all hold')
      .argument('<file>', 'the pack (the ZIP of GET /v1/rounds/{roundId}/dispute-pack)')
      .requiredOption('--keys <url-or-file>', "the service's public keys: GET /v1/keys, or a saved copy of it (a JWKS file)")
      .addHelpText('after', VERIFY_PACK_HELP),
    async (values) => {
      try {
        const verdict = await verifyPackFile(String(values.file), required(values, 'keys'));
        return verdict.valid ? verdict : new FailedAnswer(verdict);
      } catch (err) {
        if (err instanceof VerifyPackUsageError) throw new UsageError(err.message);
        throw err;
      }
    },
  );
}
