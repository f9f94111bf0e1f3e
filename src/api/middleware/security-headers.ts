import type { ApiMiddleware } from '../state.js';

// contract 5.5: HSTS on every response, whatever its status.
export const HSTS = 'max-age=63072000; includeSubDomains; preload';

export const securityHeaders = (): ApiMiddleware => async (ctx, next) => {
  ctx.set('Strict-Transport-Security', HSTS);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', 'no-store');
  await next();
};
