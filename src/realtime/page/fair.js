// @ts-check
// The dice derivation of D2 recomputed in the browser with Web Crypto, so a player can check
// a round once its server seed is revealed (D5 rotation).

const utf8 = new TextEncoder();
const TWO_POW_32 = 1n << 32n;
/** @param {ArrayBuffer} buffer */
const hex = (buffer) => Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, '0')).join('');

// The round's weight snapshot comes with its round_result (D19); 1:1 (the D2 default) only
// for a round whose result the page did not see. The committed hash, the client seed and the
// nonce are what the page knows of the round: one it never learned (null) goes in as it is,
// and the check shows a mismatch.
/** @param {{ serverSeed: string, committedHash: string | null, clientSeed: string | null, nonce: number | null, low?: bigint, high?: bigint }} round */
export async function deriveRound({ serverSeed, committedHash, clientSeed, nonce, low = 1n, high = 1n }) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new Error('web_crypto_unavailable');
  // D2: everything hashes or keys on the text of the seed
  const seedHash = hex(await subtle.digest('SHA-256', utf8.encode(serverSeed)));
  const key = await subtle.importKey('raw', utf8.encode(serverSeed), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  // D2: nonce in decimal without padding
  const message = `${clientSeed}:${nonce}`;
  const h = await subtle.sign('HMAC', key, utf8.encode(message));
  const bytes = new DataView(h);
  // D2: a = bytes 0..3, b = bytes 4..7, unsigned big-endian
  const a = BigInt(bytes.getUint32(0, false));
  const b = BigInt(bytes.getUint32(4, false));
  const left = a * (low + high);
  const right = low * TWO_POW_32;
  // D2: exact integer comparison; LOW = faces 1..3, HIGH = faces 4..6
  const side = left < right ? 'LOW' : 'HIGH';
  const faceIndex = b % 3n;
  const face = (side === 'LOW' ? 1 : 4) + Number(faceIndex);
  return {
    seedHash,
    hashMatches: seedHash === committedHash,
    message,
    hmacHex: hex(h),
    a,
    b,
    left,
    right,
    side,
    faceIndex,
    face,
  };
}

const TWO_POW_52 = 1n << 52n;
// D40: the crash point is clamped to [1.00x, 1000.00x], in cents
const CRASH_MIN_CENTS = 100n;
const CRASH_MAX_CENTS = 100000n;

// The crash point of D40 recomputed in the browser, as the recall page checks a crash round:
// x = the first 52 bits of h (bytes 0 to 6, big-endian, shifted right by 4), and
// crashCents = floor(100 * (100000 - e) * 2^52 / ((2^52 - x) * 100000)), clamped to
// [100, 100000], e being the edge (commissionMicro). Exact integers throughout (BigInt).
/** @param {{ serverSeed: string, committedHash: string | null, clientSeed: string, nonce: number, commissionMicro: bigint }} round */
export async function deriveCrash({ serverSeed, committedHash, clientSeed, nonce, commissionMicro }) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new Error('web_crypto_unavailable');
  const seedHash = hex(await subtle.digest('SHA-256', utf8.encode(serverSeed)));
  const key = await subtle.importKey('raw', utf8.encode(serverSeed), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const message = `${clientSeed}:${nonce}`;
  const h = await subtle.sign('HMAC', key, utf8.encode(message));
  const bytes = new Uint8Array(h);
  let first = 0n;
  for (let i = 0; i < 7; i++) first = (first << 8n) | BigInt(bytes[i] ?? 0);
  const x = first >> 4n;
  const raw = (100n * (100000n - commissionMicro) * TWO_POW_52) / ((TWO_POW_52 - x) * 100000n);
  const crashCents = raw < CRASH_MIN_CENTS ? CRASH_MIN_CENTS : raw > CRASH_MAX_CENTS ? CRASH_MAX_CENTS : raw;
  return { seedHash, hashMatches: seedHash === committedHash, message, hmacHex: hex(h), x, crashCents };
}

// "2.37" for 237n (D40 writes multipliers with two decimals)
/** @param {bigint} cents */
export const centsText = (cents) => `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;
