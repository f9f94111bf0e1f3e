import type { ServiceContext } from '../context.js';
import { currentWalletCredential } from '../operators/credentials.js';
import type { WalletTarget } from './client.js';

export class WalletTargetError extends Error {
  override name = 'WalletTargetError';
}

// Where and with which credential to call an operator's wallet (D6: the newest valid
// wallet credential signs).
export async function walletTarget(svc: Pick<ServiceContext, 'db' | 'config' | 'now'>, operatorId: string): Promise<WalletTarget> {
  const operator = await svc.db.operator.findUnique({ where: { id: operatorId }, select: { walletUrl: true } });
  if (!operator) throw new WalletTargetError(`operator ${operatorId} does not exist`);
  const credential = await currentWalletCredential(svc.db, svc.config.masterKey, operatorId, svc.now());
  if (!credential) throw new WalletTargetError(`operator ${operatorId} has no valid wallet credential`);
  return { operatorId, walletUrl: operator.walletUrl, keyId: credential.kid, secret: credential.secret };
}
