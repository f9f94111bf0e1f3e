import { Batcher } from '../batch.js';
import type { ServiceContext } from '../context.js';
import { statement, type Sql } from '../db/sql.js';
import { revealSecret } from '../operators/credentials.js';
import type { WalletTarget } from './client.js';

export class WalletTargetError extends Error {
  override name = 'WalletTargetError';
}

// Where and with which credential to call an operator's wallet (D6: the newest credential
// valid now signs, so a rotation or a revocation applies to the very next call). Read
// afresh for every call, the lookups of calls made at the same moment in one statement.
const RESOLVE = statement(
  'wallet_targets',
  `SELECT u.operator_id, o.wallet_url, c.kid, c.encrypted_secret, c.wrapped_data_key
   FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS u(operator_id, at, n)
   LEFT JOIN operators o ON o.id = u.operator_id
   LEFT JOIN LATERAL (
     SELECT kid, encrypted_secret, wrapped_data_key FROM credentials
     WHERE operator_id = u.operator_id AND kind = 'WALLET' AND revoked_at IS NULL
       AND not_before <= u.at AND (not_after IS NULL OR u.at <= not_after)
     ORDER BY not_before DESC
     LIMIT 1
   ) c ON true
   ORDER BY u.n`,
);

type Row = {
  operator_id: string;
  wallet_url: string | null;
  kid: string | null;
  encrypted_secret: Buffer | null;
  wrapped_data_key: Buffer | null;
};

export class WalletTargets {
  private readonly lookups: Batcher<{ operatorId: string; at: Date }, WalletTarget | WalletTargetError>;

  constructor(sql: Sql, masterKey: Buffer) {
    this.lookups = new Batcher(
      async (items) => {
        const rows = await sql.query<Row>(RESOLVE, [items.map((i) => i.operatorId), items.map((i) => i.at)]);
        // one row per item, in order (each join adds at most one row)
        return rows.map((row) => {
          if (row.wallet_url === null) return new WalletTargetError(`operator ${row.operator_id} does not exist`);
          if (row.kid === null) return new WalletTargetError(`operator ${row.operator_id} has no valid wallet credential`);
          const secret = revealSecret(masterKey, {
            kid: row.kid,
            encryptedSecret: row.encrypted_secret!,
            wrappedDataKey: row.wrapped_data_key!,
          });
          return { operatorId: row.operator_id, walletUrl: row.wallet_url, keyId: row.kid, secret };
        });
      },
      { maxBatch: 200, maxInFlight: 4 },
    );
  }

  async resolve(operatorId: string, at: Date): Promise<WalletTarget> {
    const target = await this.lookups.add({ operatorId, at });
    if (target instanceof WalletTargetError) throw target;
    return target;
  }
}

export const walletTarget = (svc: Pick<ServiceContext, 'wallet' | 'now'>, operatorId: string): Promise<WalletTarget> =>
  svc.wallet.targets.resolve(operatorId, svc.now());
