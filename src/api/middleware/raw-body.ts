import getRawBody from 'raw-body';
import { invalidRequest, payloadTooLarge } from '../../shared/platform/errors.js';
import type { ApiMiddleware } from '../state.js';

// D9: bodies over 64 KiB are refused with 413. The bytes are kept exactly as received:
// the signature covers them (contract 5.2 step 3) and JSON is parsed only afterwards.
export const MAX_BODY_BYTES = 64 * 1024;

export const rawBody = (): ApiMiddleware => async (ctx, next) => {
  try {
    ctx.state.rawBody = await getRawBody(ctx.req, { limit: MAX_BODY_BYTES, length: ctx.get('content-length') || undefined });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(MAX_BODY_BYTES);
    throw invalidRequest('RS_ERROR_WRONG_SYNTAX', 'the request body could not be read');
  }
  await next();
};
