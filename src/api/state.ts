import type { ParameterizedContext } from 'koa';
import type { Credential, Operator } from '../platform/db/client.js';
import type { IdempotencyClaim } from '../platform/idempotency.js';

// What the signed-request pipeline learns about a request, in the order it learns it.
export type ApiState = {
  // ip-allow-list: the credential named by X-Rgs-Key-Id, with its operator
  credential?: Credential & { operator: Operator };
  // raw-body: the exact bytes received (contract 5.2 step 3)
  rawBody: Buffer;
  // signature: the verified operator, then the body parsed from the verified bytes
  operator: Operator;
  body: unknown;
  bodyIsJson: boolean;
  // idempotency: the key this request claimed (D17), when it carries a requestUuid
  idempotency?: IdempotencyClaim;
};

export type ApiContext = ParameterizedContext<ApiState>;
export type ApiMiddleware = (ctx: ApiContext, next: () => Promise<unknown>) => Promise<void>;
