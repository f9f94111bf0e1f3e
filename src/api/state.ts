import type { ParameterizedContext } from 'koa';
import type { Credential, Operator } from '../shared/platform/db/client.js';
import type { IdempotencyClaim } from '../shared/platform/idempotency.js';
import type { Logger } from '../shared/platform/logger.js';

// What the signed-request pipeline learns about a request, in the order it learns it.
export type ApiState = {
  // request-log: the logger bound to this request's id (absent only where an app is put
  // together without that stage, as some tests do)
  log?: Logger;
  // app.ts: the route a /v1 request was meant for, when the signed stage refused it before
  // any route matched (logs and metrics name it)
  route?: string;
  // ip-allow-list: the credential named by X-Rgs-Key-Id, with its operator
  credential?: Credential & { operator: Operator };
  // raw-body: the exact bytes received (contract 5.2 step 3)
  rawBody: Buffer;
  // signature: the verified operator, then the body parsed from the verified bytes
  operator: Operator;
  // D35: the operator's sandbox powers are in effect here (src/shared/game/operators/sandbox.ts)
  sandbox?: boolean;
  body: unknown;
  bodyIsJson: boolean;
  // idempotency: the key this request claimed (D17), when it carries a requestUuid
  idempotency?: IdempotencyClaim;
};

export type ApiContext = ParameterizedContext<ApiState>;
export type ApiMiddleware = (ctx: ApiContext, next: () => Promise<unknown>) => Promise<void>;

// The service as one request sees it: its logger carries the request's id (request-log.ts).
export const forRequest = <S extends { logger: Logger }>(svc: S, ctx: ApiContext): S =>
  ctx.state.log ? { ...svc, logger: ctx.state.log } : svc;
