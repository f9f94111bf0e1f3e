import type { Db } from '../../platform/db/client.js';
import { isValidAt } from '../../wallet/credentials.js';

// `rgs operator list` (D11): every operator with its credentials' kids and validity
// (contract 5.3). No secret is read: the ciphertext columns are not even selected.

export type CredentialStatus = 'valid' | 'not_yet_valid' | 'expired' | 'revoked';

export type ListedOperator = {
  operatorId: string;
  status: 'active' | 'suspended';
  // D35: a test tenant
  sandbox: boolean;
  walletUrl: string;
  currencies: string[];
  credentials: {
    kid: string;
    kind: 'api' | 'wallet';
    status: CredentialStatus;
    notBefore: string;
    notAfter: string | null;
    revokedAt: string | null;
  }[];
};

type Validity = { notBefore: Date; notAfter: Date | null; revokedAt: Date | null };

function credentialStatus(row: Validity, now: Date): CredentialStatus {
  if (row.revokedAt !== null) return 'revoked';
  if (isValidAt(row, now)) return 'valid';
  return now < row.notBefore ? 'not_yet_valid' : 'expired';
}

export async function listOperators(db: Db, now: Date): Promise<ListedOperator[]> {
  const operators = await db.operator.findMany({
    orderBy: { id: 'asc' },
    select: {
      id: true,
      walletUrl: true,
      currencies: true,
      suspended: true,
      sandbox: true,
      credentials: {
        select: { kid: true, kind: true, notBefore: true, notAfter: true, revokedAt: true },
        orderBy: [{ kind: 'asc' }, { notBefore: 'asc' }, { kid: 'asc' }],
      },
    },
  });
  return operators.map((operator) => ({
    operatorId: operator.id,
    status: operator.suspended ? 'suspended' : 'active',
    sandbox: operator.sandbox,
    walletUrl: operator.walletUrl,
    currencies: operator.currencies,
    credentials: operator.credentials.map((credential) => ({
      kid: credential.kid,
      kind: credential.kind === 'API' ? 'api' : 'wallet',
      status: credentialStatus(credential, now),
      notBefore: credential.notBefore.toISOString(),
      notAfter: credential.notAfter?.toISOString() ?? null,
      revokedAt: credential.revokedAt?.toISOString() ?? null,
    })),
  }));
}
