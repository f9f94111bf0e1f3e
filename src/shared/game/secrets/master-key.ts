import type { Queryable, Sql } from '../../platform/db/sql.js';
import { rewrapCredential } from '../../wallet/credentials.js';
import { rewrapServerSeed } from '../fairness/seed-vault.js';
import { rewrapSigningKey } from '../../platform/signing-keys.js';

// `rgs master-key rewrap` (contract 5.3, D25): everything sealed under MASTER_KEY moves to a
// new key in one transaction. That is every credential's data key (the secrets the operators
// hold do not change), every server seed (its commitment, serverSeedHash, does not change)
// and every signing key's data key (D32, D34: the pack and token keys; their public keys,
// which auditors and token verifiers hold, do not change). A row already under the new key is left as it is, so a rerun changes nothing
// and a row sealed by a process that still ran with the old key is picked up by the next
// run. A row that opens under neither key stops the whole run before anything is committed.

export type RewrapCounts = {
  // publicKeySkipped: D34 credentials verified with the operator's public key seal nothing
  credentials: { rewrapped: number; alreadyUnderNewKey: number; revokedSkipped: number; publicKeySkipped: number };
  seeds: { rewrapped: number; alreadyUnderNewKey: number };
  signingKeys: { rewrapped: number; alreadyUnderNewKey: number };
};

// named in the error, a few of each kind: a wrong MASTER_KEY makes every row unreadable
const NAMED = 20;
const SEED_BATCH = 1000;
const LOCK_NOT_AVAILABLE = '55P03';

type UnreadableCredential = { kid: string; operatorId: string };
type UnreadableSeed = { seedId: string; sessionId: string };
type UnreadableSigningKey = { kid: string };

class Unreadable<T> {
  count = 0;
  readonly named: T[] = [];
  add(row: T): void {
    this.count += 1;
    if (this.named.length < NAMED) this.named.push(row);
  }
}

export class MasterKeyRewrapError extends Error {
  override name = 'MasterKeyRewrapError';
  readonly details: {
    unreadable: {
      credentialCount: number;
      seedCount: number;
      signingKeyCount: number;
      credentials: UnreadableCredential[];
      seeds: UnreadableSeed[];
      signingKeys: UnreadableSigningKey[];
    };
  };

  constructor(
    credentials: Unreadable<UnreadableCredential>,
    seeds: Unreadable<UnreadableSeed>,
    signingKeys: Unreadable<UnreadableSigningKey>,
    readable: number,
  ) {
    const named = [
      ...credentials.named.map((c) => `credential ${c.kid} (operator ${c.operatorId})`),
      ...seeds.named.map((s) => `seed ${s.seedId} (session ${s.sessionId})`),
      ...signingKeys.named.map((k) => `signing key ${k.kid}`),
    ];
    const more = credentials.count + seeds.count + signingKeys.count - named.length;
    super(
      `nothing was changed: ${credentials.count} credential(s), ${seeds.count} seed(s) and ${signingKeys.count} signing key(s) open neither under MASTER_KEY nor under ` +
        `NEW_MASTER_KEY: ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}` +
        (readable === 0 ? '. No row opens: MASTER_KEY is probably not the key they were sealed under' : ''),
    );
    this.details = {
      unreadable: {
        credentialCount: credentials.count,
        seedCount: seeds.count,
        signingKeyCount: signingKeys.count,
        credentials: credentials.named,
        seeds: seeds.named,
        signingKeys: signingKeys.named,
      },
    };
  }
}

type CredentialRow = { kid: string; operator_id: string; alg: string; revoked_at: Date | null; encrypted_secret: Buffer; wrapped_data_key: Buffer };
type SeedRow = { id: string; session_id: string; encrypted_server_seed: Buffer };

export async function rewrapMasterKey(sql: Sql, from: Buffer, to: Buffer): Promise<RewrapCounts> {
  try {
    return await sql.transaction(async (tx) => {
      // Every process seals new seeds under MASTER_KEY, and this tool new credentials: no
      // other transaction adds or changes a sealed row between this one's reads and its
      // commit. Reads go on; a writer waits, and this run gives up rather than wait long.
      await tx.query(`SET LOCAL lock_timeout = '10s'`);
      await tx.query('LOCK TABLE credentials, seeds, signing_keys IN EXCLUSIVE MODE');
      const unreadableCredentials = new Unreadable<UnreadableCredential>();
      const unreadableSeeds = new Unreadable<UnreadableSeed>();
      const unreadableSigningKeys = new Unreadable<UnreadableSigningKey>();
      // once a row is known unreadable the transaction will roll back: the rest is only
      // read, to name the rows that stop the run
      const writing = () => unreadableCredentials.count + unreadableSeeds.count + unreadableSigningKeys.count === 0;
      const credentials = await rewrapCredentials(tx, from, to, unreadableCredentials, writing);
      const seeds = await rewrapSeeds(tx, from, to, unreadableSeeds, writing);
      const signingKeys = await rewrapSigningKeys(tx, from, to, unreadableSigningKeys, writing);
      // the throw rolls back whatever was written before the first unreadable row was met
      if (unreadableCredentials.count + unreadableSeeds.count + unreadableSigningKeys.count > 0) {
        const readable =
          credentials.rewrapped + credentials.alreadyUnderNewKey + seeds.rewrapped + seeds.alreadyUnderNewKey + signingKeys.rewrapped + signingKeys.alreadyUnderNewKey;
        throw new MasterKeyRewrapError(unreadableCredentials, unreadableSeeds, unreadableSigningKeys, readable);
      }
      return { credentials, seeds, signingKeys };
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === LOCK_NOT_AVAILABLE) {
      throw new Error('the credentials, seeds or signing_keys tables are being written by another process: stop every rgs process and run it again');
    }
    throw err;
  }
}

async function rewrapCredentials(
  tx: Queryable,
  from: Buffer,
  to: Buffer,
  unreadable: Unreadable<UnreadableCredential>,
  writing: () => boolean,
): Promise<RewrapCounts['credentials']> {
  const counts = { rewrapped: 0, alreadyUnderNewKey: 0, revokedSkipped: 0, publicKeySkipped: 0 };
  // one row per credential ever issued: a few per operator
  const rows = await tx.query<CredentialRow>(
    'SELECT kid, operator_id, alg, revoked_at, encrypted_secret, wrapped_data_key FROM credentials ORDER BY kid',
  );
  for (const row of rows) {
    // contract 5.3: a revoked credential's ciphertext is zeroed; nothing is sealed there
    if (row.revoked_at !== null) {
      counts.revokedSkipped += 1;
      continue;
    }
    if (row.alg !== 'HS256') {
      counts.publicKeySkipped += 1;
      continue;
    }
    const result = rewrapCredential(from, to, { kid: row.kid, encryptedSecret: row.encrypted_secret, wrappedDataKey: row.wrapped_data_key });
    if (result.state === 'unreadable') unreadable.add({ kid: row.kid, operatorId: row.operator_id });
    else if (result.state === 'current') counts.alreadyUnderNewKey += 1;
    else {
      if (writing()) await tx.query('UPDATE credentials SET wrapped_data_key = $2 WHERE kid = $1', [row.kid, result.sealed]);
      counts.rewrapped += 1;
    }
  }
  return counts;
}

// Seeds grow with every session: read and written a batch at a time, in id order.
async function rewrapSeeds(
  tx: Queryable,
  from: Buffer,
  to: Buffer,
  unreadable: Unreadable<UnreadableSeed>,
  writing: () => boolean,
): Promise<RewrapCounts['seeds']> {
  const counts = { rewrapped: 0, alreadyUnderNewKey: 0 };
  let after: string | undefined;
  for (;;) {
    const rows = await tx.query<SeedRow>(
      after === undefined
        ? 'SELECT id, session_id, encrypted_server_seed FROM seeds ORDER BY id LIMIT $1'
        : 'SELECT id, session_id, encrypted_server_seed FROM seeds WHERE id > $2::uuid ORDER BY id LIMIT $1',
      after === undefined ? [SEED_BATCH] : [SEED_BATCH, after],
    );
    if (rows.length === 0) return counts;
    after = rows.at(-1)!.id;
    const ids: string[] = [];
    const sealed: Buffer[] = [];
    for (const row of rows) {
      const result = rewrapServerSeed(from, to, row.id, row.encrypted_server_seed);
      if (result.state === 'unreadable') unreadable.add({ seedId: row.id, sessionId: row.session_id });
      else if (result.state === 'current') counts.alreadyUnderNewKey += 1;
      else {
        ids.push(row.id);
        sealed.push(result.sealed);
      }
    }
    if (ids.length > 0 && writing()) {
      await tx.query(
        `UPDATE seeds SET encrypted_server_seed = v.sealed
         FROM unnest($1::uuid[], $2::bytea[]) AS v(id, sealed) WHERE seeds.id = v.id`,
        [ids, sealed],
      );
    }
    counts.rewrapped += ids.length;
  }
}

// The service's signing keys (D32): a few per purpose, ever.
async function rewrapSigningKeys(
  tx: Queryable,
  from: Buffer,
  to: Buffer,
  unreadable: Unreadable<UnreadableSigningKey>,
  writing: () => boolean,
): Promise<RewrapCounts['signingKeys']> {
  const counts = { rewrapped: 0, alreadyUnderNewKey: 0 };
  const rows = await tx.query<{ kid: string; encrypted_private_key: Buffer; wrapped_data_key: Buffer }>(
    'SELECT kid, encrypted_private_key, wrapped_data_key FROM signing_keys ORDER BY kid',
  );
  for (const row of rows) {
    const result = rewrapSigningKey(from, to, { kid: row.kid, encryptedPrivateKey: row.encrypted_private_key, wrappedDataKey: row.wrapped_data_key });
    if (result.state === 'unreadable') unreadable.add({ kid: row.kid });
    else if (result.state === 'current') counts.alreadyUnderNewKey += 1;
    else {
      if (writing()) await tx.query('UPDATE signing_keys SET wrapped_data_key = $2 WHERE kid = $1', [row.kid, result.sealed]);
      counts.rewrapped += 1;
    }
  }
  return counts;
}
