import { hkdfSync } from 'node:crypto';
import { open, seal, type Rewrapped } from '../../platform/crypto.js';

// Server seeds are stored encrypted (contract 2.13) with AES-256-GCM under a key derived
// from MASTER_KEY for this purpose only; the seed row id is bound in as associated data.

// derived once per master key: every round's outcome opens its seed
const derived = new WeakMap<Buffer, Buffer>();
function seedKey(masterKey: Buffer): Buffer {
  let key = derived.get(masterKey);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'rgs/server-seed/v1', 32));
    derived.set(masterKey, key);
  }
  return key;
}

export const sealServerSeed = (masterKey: Buffer, seedId: string, serverSeed: string): Uint8Array<ArrayBuffer> =>
  new Uint8Array(seal(seedKey(masterKey), Buffer.from(serverSeed, 'utf8'), `seed:${seedId}`));

export const openServerSeed = (masterKey: Buffer, seedId: string, sealed: Uint8Array): string =>
  open(seedKey(masterKey), Buffer.from(sealed), `seed:${seedId}`).toString('utf8');

// MASTER_KEY rotation (`rgs master-key rewrap`, D25): the same seed sealed under the key
// derived from `to`, so that its commitment (serverSeedHash) and its reveal do not change.
export function rewrapServerSeed(from: Buffer, to: Buffer, seedId: string, sealed: Uint8Array): Rewrapped {
  try {
    openServerSeed(to, seedId, sealed);
    return { state: 'current' };
  } catch {
    // not yet under `to`
  }
  let serverSeed: string;
  try {
    serverSeed = openServerSeed(from, seedId, sealed);
  } catch {
    return { state: 'unreadable' };
  }
  return { state: 'rewrapped', sealed: Buffer.from(sealServerSeed(to, seedId, serverSeed)) };
}
