import type { ServiceContext } from '../context.js';
import { currentWalletCredential } from '../operators/credentials.js';
import type { WalletTarget } from './client.js';

export class WalletTargetError extends Error {
  override name = 'WalletTargetError';
}

type TargetContext = Pick<ServiceContext, 'db' | 'config' | 'now'>;

// Where and with which credential to call an operator's wallet (D6: the newest valid
// wallet credential signs).
export async function targetFor(svc: TargetContext, operator: { id: string; walletUrl: string }): Promise<WalletTarget> {
  const credential = await currentWalletCredential(svc.db, svc.config.masterKey, operator.id, svc.now());
  if (!credential) throw new WalletTargetError(`operator ${operator.id} has no valid wallet credential`);
  return { operatorId: operator.id, walletUrl: operator.walletUrl, keyId: credential.kid, secret: credential.secret };
}

export async function walletTarget(svc: TargetContext, operatorId: string): Promise<WalletTarget> {
  const operator = await svc.db.operator.findUnique({ where: { id: operatorId }, select: { id: true, walletUrl: true } });
  if (!operator) throw new WalletTargetError(`operator ${operatorId} does not exist`);
  return targetFor(svc, operator);
}
