import getRawBody from 'raw-body';
import { invalidRequest, payloadTooLarge } from '../../shared/platform/errors.js';
import type { ApiMiddleware } from '../state.js';

// D9: bodies over 64 KiB are refused with 413. The bytes are kept exactly as received:
// the signature covers them (contract 5.2 step 3) and JSON is parsed only afterwards.
export const MAX_BODY_BYTES = 64 * 1024;

// D42, D24: a free-bet campaign names up to 10,000 playerRefs of up to 128 characters each,
// which no 64 KiB body holds: 10,000 ASCII refs of 128 characters are about 1.3 MB with their
// quotes and commas. Its create alone may send 2 MiB; a list of longer (multi-byte) refs is
// split over campaigns. The limit is chosen by method and path before any route matches, so
// no other route's bound grows, and the signature is still checked over the whole body.
export const FREEBETS_MAX_BODY_BYTES = 2 * 1024 * 1024;
const LARGER_BODIES: Readonly<Record<string, number>> = { 'POST /v1/freebets': FREEBETS_MAX_BODY_BYTES };

export const bodyLimit = (method: string, path: string): number =>
  LARGER_BODIES[`${method.toUpperCase()} ${path.toLowerCase().replace(/\/+$/, '')}`] ?? MAX_BODY_BYTES;

export const rawBody = (): ApiMiddleware => async (ctx, next) => {
  const limit = bodyLimit(ctx.method, ctx.path);
  try {
    ctx.state.rawBody = await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(limit);
    throw invalidRequest('RS_ERROR_WRONG_SYNTAX', 'the request body could not be read');
  }
  await next();
};
