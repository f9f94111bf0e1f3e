import { createHash, createHmac, randomBytes } from 'node:crypto';

// Seeds (DECISIONS D2): the server seed is 32 random bytes written as 64 lower-case hex
// characters, and everything hashes or keys on that text.

export const generateServerSeed = (): string => randomBytes(32).toString('hex');

// D2, D35: the form of a server seed, which a sandbox launch may supply (sandboxSeeds)
export const SERVER_SEED_PATTERN = '^[0-9a-f]{64}$';

// D2: serverSeedHash = sha256_hex(utf8(serverSeed)); `echo -n "$seed" | sha256sum` agrees.
// The fairness hash is its own rule, apart from the request signer's body hash (contract 5.1).
export const serverSeedHash = (serverSeed: string): string => createHash('sha256').update(serverSeed, 'utf8').digest('hex');

export const generateClientSeed = (): string => randomBytes(16).toString('hex');

// D2: a supplied clientSeed is 1 to 64 printable ASCII characters, no ":".
export const CLIENT_SEED_PATTERN = '^[\\x20-\\x39\\x3B-\\x7E]{1,64}$';

export type RoundSeed = { serverSeed: string; clientSeed: string; nonce: number };

// D2: the round's `h` = HMAC-SHA256(key = utf8(serverSeed), msg = utf8(clientSeed + ":" +
// nonce)), the nonce in decimal without padding. Every game derives its outcome from these 32
// bytes (D39), dice by D2, crash by D40.
export function roundHash({ serverSeed, clientSeed, nonce }: RoundSeed): Buffer {
  checkNonce(nonce);
  return seedHmac(serverSeed, `${clientSeed}:${nonce}`);
}

// D41, contract 2.11 MULTI: a game with several draws per play (the multi-event game) takes
// its i-th draw from h_i = HMAC-SHA256(key = utf8(serverSeed), msg = utf8(clientSeed + ":" +
// nonce + ":" + i)), the same HMAC as the round's h with the draw's index appended (decimal,
// no padding), so each draw is independent of the others and of how many a play uses.
export function drawHash({ serverSeed, clientSeed, nonce }: RoundSeed, index: number): Buffer {
  checkNonce(nonce);
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`a draw's index must be a non-negative integer: ${index}`);
  return seedHmac(serverSeed, `${clientSeed}:${nonce}:${index}`);
}

function checkNonce(nonce: number): void {
  if (!Number.isSafeInteger(nonce) || nonce < 0) throw new RangeError(`nonce must be a non-negative integer: ${nonce}`);
}

const seedHmac = (serverSeed: string, message: string): Buffer => createHmac('sha256', Buffer.from(serverSeed, 'utf8')).update(Buffer.from(message, 'utf8')).digest();
