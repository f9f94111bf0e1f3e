import { KeyObject, verify } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet } from 'jose';
import { nonPublicAddress, publicOnlyLookupFor } from '../platform/address-policy.js';
import { RSA_KEY_RULE, rsaKeyProblem } from '../domain/rsa-keys.js';
import { CredentialError, publicKeyOf, type PublicKeyAlg } from './credentials.js';

// D34: the public keys an API credential of RS256 or EdDSA is verified with, and the
// verification itself. X-Rgs-Key-Id names the credential (contract 5.1, unchanged); its key
// is the PEM it was added with, or any key of its key set (JWKS) usable for its algorithm,
// so that an operator rotates inside its own key set with nothing to change here. No JWK kid
// travels with a request. X-Rgs-Signature is the base64 of the signature over the canonical
// string of contract 5.1: RSASSA-PKCS1-v1_5 with SHA-256 (RS256) or Ed25519 (EdDSA).

// A key set is kept at most this long after it was fetched (D34)
export const JWKS_MAX_AGE_MS = 10 * 60 * 1000;
// a signature no cached key verifies fetches the set again, at most this often (the
// operator may have just added a key)
const JWKS_REFETCH_COOLDOWN_MS = 30 * 1000;
// D24: the operator's key server is untrusted in time and size
export const JWKS_FETCH_TIMEOUT_MS = 5000;
export const JWKS_MAX_BYTES = 64 * 1024;
// keys of one set tried against one request's signature, the cached set's and a refetched
// one's together (D24: the CPU one request can cost is bounded)
const KEYS_TRIED = 10;

// The credential's keys cannot be had: its key set could not be fetched (or was no key set)
// and no copy younger than JWKS_MAX_AGE_MS is cached. 401 key_unavailable.
export class KeyUnavailableError extends Error {
  override name = 'KeyUnavailableError';
}

export type PublicKeyCredential = { kid: string; alg: PublicKeyAlg; publicKey: string | null; jwksUrl: string | null; privateAllowed: boolean };

// The signature over `canonical` verifies with one of the credential's keys, with its own
// algorithm only (the credential's allow-list, D34)
export function verifiesWith(alg: PublicKeyAlg, key: KeyObject, canonical: string, signature: Buffer): boolean {
  try {
    return verify(alg === 'RS256' ? 'sha256' : null, Buffer.from(canonical, 'utf8'), key, signature);
  } catch {
    return false;
  }
}

type CachedSet = { keys: Partial<Record<PublicKeyAlg, KeyObject[]>>; set: JSONWebKeySet; fetchedAt: number };

export class PublicKeys {
  private readonly pems = new Map<string, KeyObject>();
  private readonly sets = new Map<string, CachedSet>();
  private readonly fetching = new Map<string, Promise<CachedSet>>();

  // production: a key set URL is fetched from public addresses only, unless the operator is
  // flagged (D25, as its wallet)
  constructor(
    private readonly production: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  async verify(credential: PublicKeyCredential, canonical: string, signature: Buffer): Promise<boolean> {
    if (credential.publicKey !== null) {
      let key = this.pems.get(credential.kid);
      if (!key) {
        try {
          key = publicKeyOf(credential.alg, credential.publicKey);
        } catch (err) {
          // a PEM stored before the key rules of D34 tightened (an RSA key of another exponent
          // or size): it fails its own credential, nobody else's (D24)
          if (!(err instanceof CredentialError)) throw err;
          throw new KeyUnavailableError(`the public key of credential ${credential.kid} is refused: ${err.message}`);
        }
        if (this.pems.size >= 10_000) this.pems.clear();
        this.pems.set(credential.kid, key);
      }
      return verifiesWith(credential.alg, key, canonical, signature);
    }
    if (credential.jwksUrl === null) throw new KeyUnavailableError(`credential ${credential.kid} has no public key`);
    const url = credential.jwksUrl;
    const noUsableKey = () => new KeyUnavailableError(`the key set at ${url} has no usable ${credential.alg} key (${credential.alg === 'RS256' ? RSA_KEY_RULE : 'Ed25519'})`);
    let cached = this.sets.get(url);
    if (!cached || this.now() - cached.fetchedAt > JWKS_MAX_AGE_MS) cached = await this.fetchSet(url, credential.privateAllowed);
    // D24: one request's keys tried, the cached set's and a refetched one's together
    const budget = { left: KEYS_TRIED };
    const first = await this.tryKeys(cached, credential.alg, canonical, signature, budget);
    if (first === true) return true;
    // the operator may have added (or fixed) a key since: fetched again (not too often); a set
    // that cannot be fetched now leaves the answer as it was
    const fresh =
      this.now() - cached.fetchedAt < JWKS_REFETCH_COOLDOWN_MS ? undefined : await this.fetchSet(url, credential.privateAllowed).catch(() => undefined);
    const second = fresh && (await this.tryKeys(fresh, credential.alg, canonical, signature, budget));
    if (second === true) return true;
    // a set with no key usable for the credential fails that credential only (D24)
    if ((fresh ? second : first) === undefined) throw noUsableKey();
    return false;
  }

  // true: a key verified the signature (it is tried first next time, so that an honest
  // request costs one verification); false: none did; undefined: the set has no usable key
  private async tryKeys(cached: CachedSet, alg: PublicKeyAlg, canonical: string, signature: Buffer, budget: { left: number }): Promise<boolean | undefined> {
    const keys = (cached.keys[alg] ??= await usableKeys(cached.set, alg));
    if (keys.length === 0) return undefined;
    for (let i = 0; i < keys.length && budget.left > 0; i++) {
      budget.left -= 1;
      if (verifiesWith(alg, keys[i]!, canonical, signature)) {
        if (i > 0) keys.unshift(...keys.splice(i, 1));
        return true;
      }
    }
    return false;
  }

  // one fetch of a URL at a time, however many requests wait for it
  private fetchSet(url: string, privateAllowed: boolean): Promise<CachedSet> {
    let pending = this.fetching.get(url);
    if (!pending) {
      pending = fetchKeySet(url, this.production && !privateAllowed)
        .then((set) => {
          const cached: CachedSet = { keys: {}, set, fetchedAt: this.now() };
          if (this.sets.size >= 10_000) this.sets.clear();
          this.sets.set(url, cached);
          return cached;
        })
        .finally(() => this.fetching.delete(url));
      this.fetching.set(url, pending);
    }
    return pending;
  }
}

// jose selects the keys of the set usable for the algorithm (kty, crv, use, key_ops and alg);
// of those, an RSA key outside the rules of src/shared/domain/rsa-keys.ts is skipped (D34, D24: an
// operator's key must not make a verification dear), and at most KEYS_TRIED are kept
async function usableKeys(set: JSONWebKeySet, alg: PublicKeyAlg): Promise<KeyObject[]> {
  const usable = (key: KeyObject) => alg !== 'RS256' || rsaKeyProblem(key.asymmetricKeyDetails) === undefined;
  const select = createLocalJWKSet(set);
  try {
    return [KeyObject.from(await select({ alg }))].filter(usable);
  } catch (err) {
    if (err instanceof joseErrors.JWKSMultipleMatchingKeys) {
      const keys: KeyObject[] = [];
      for await (const key of err) {
        const object = KeyObject.from(key);
        if (usable(object)) keys.push(object);
        if (keys.length === KEYS_TRIED) break;
      }
      return keys;
    }
    // no usable key, or a key the set holds that cannot be imported: nothing verifies
    return [];
  }
}

const publicOnlyLookup = publicOnlyLookupFor('JWKS URL');

// GET the key set: D24's timeout over the whole exchange and cap on the answer's size, D25's
// public addresses
function fetchKeySet(raw: string, publicOnly: boolean): Promise<JSONWebKeySet> {
  const url = new URL(raw);
  const secure = url.protocol === 'https:';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = publicOnly && isIP(host) ? nonPublicAddress(host, [host], 'JWKS URL') : undefined;
  if (literal) return Promise.reject(new KeyUnavailableError(literal.message));
  return new Promise((resolve, reject) => {
    const fail = (message: string) => {
      clearTimeout(timer);
      request.destroy();
      reject(new KeyUnavailableError(`the key set at ${raw} cannot be read: ${message}`));
    };
    const request = (secure ? https : http).get(url, { headers: { accept: 'application/json' }, ...(publicOnly ? { lookup: publicOnlyLookup } : {}) }, (response) => {
      if (response.statusCode !== 200) return fail(`HTTP ${response.statusCode}`);
      if (Number(response.headers['content-length']) > JWKS_MAX_BYTES) return fail(`over ${JWKS_MAX_BYTES} bytes`);
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > JWKS_MAX_BYTES) return fail(`over ${JWKS_MAX_BYTES} bytes`);
        chunks.push(chunk);
      });
      response.on('end', () => {
        clearTimeout(timer);
        let set: unknown;
        try {
          set = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reject(new KeyUnavailableError(`the key set at ${raw} is not JSON`));
        }
        const keys = (set as { keys?: unknown } | null)?.keys;
        if (!Array.isArray(keys) || keys.some((key) => typeof key !== 'object' || key === null || Array.isArray(key))) {
          return reject(new KeyUnavailableError(`the document at ${raw} is not a JWKS ({"keys": [...]})`));
        }
        resolve(set as JSONWebKeySet);
      });
      response.on('error', (err) => fail(err.message));
    });
    const timer = setTimeout(() => fail(`no answer within ${JWKS_FETCH_TIMEOUT_MS} ms`), JWKS_FETCH_TIMEOUT_MS);
    request.on('error', (err) => fail(err.message));
  });
}
