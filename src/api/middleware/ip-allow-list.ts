import type { Sql } from '../../shared/platform/db/sql.js';
import { ipNotAllowed } from '../../shared/platform/errors.js';
import { credentialWithOperator } from '../../shared/wallet/credentials.js';
import { ipAllowed } from '../../shared/game/operators/operators.js';
import { SIGNATURE_HEADERS } from '../../shared/wallet/signer.js';
import type { ApiMiddleware } from '../state.js';

// contract 5.4: when the operator's allow-list is non-empty the caller IP must be on it,
// and a mismatch is 403 before the signature is checked. The operator is the owner of the
// key named in X-Rgs-Key-Id; the caller IP is ctx.ip: the socket address, or with TRUST_PROXY
// the X-Forwarded-For entry TRUST_PROXY_HOPS places from the right (D12, D24; app.ts).
export const ipAllowList = (sql: Sql): ApiMiddleware => async (ctx, next) => {
  const kid = ctx.get(SIGNATURE_HEADERS.keyId);
  if (kid) {
    const credential = await credentialWithOperator(sql, kid);
    if (credential) {
      ctx.state.credential = credential;
      if (!ipAllowed(credential.operator.ipAllowList, ctx.ip)) throw ipNotAllowed();
    }
  }
  await next();
};
