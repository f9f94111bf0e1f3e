import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Router from '@koa/router';
import type { ServiceContext } from '../shared/game/context.js';
import { recallRound } from '../shared/game/reports/recall.js';
import { verifyRecallToken } from '../shared/game/reports/recall-link.js';
import { PAGE_DIR, contentSecurityPolicy, type FrameAncestorsCache } from './launch-page.js';

// The recall page (D33): `/replay/{roundId}?t=...` shows one round as the player lived it, to
// whoever holds the link the operator asked for (GET /v1/rounds/{roundId}/replay-url). The
// link's token is the only authority: it names the round and its operator, and expires 24
// hours after it was made. The page is the launch page's kin (D16): the same policy, the
// operator's frame-ancestors, every script and style a file served from here. The round is
// embedded in the page as JSON (a data block, which the policy does not run), read at each
// load, so a seed revealed after the link was made shows on the next load.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DATA_MARK = '<!--recall-data-->';

// a refusal says what happened and nothing more: no stack, no detail of the token
const REFUSALS = {
  expired: { status: 401, title: 'This recall link has expired', text: 'A recall link works for 24 hours. Ask the casino for a new one.' },
  invalid: { status: 403, title: 'This recall link is not valid', text: 'The link is incomplete or was changed. Ask the casino for a new one.' },
  unknown: { status: 404, title: 'Round not found', text: 'No round of this casino has this id.' },
} as const;

export function replayPageRoutes(svc: ServiceContext, cache: FrameAncestorsCache) {
  const router = new Router();
  let html: Promise<string> | undefined;

  router.get('/replay/:roundId', async (ctx) => {
    const roundId = (ctx.params.roundId ?? '').toLowerCase();
    const token = typeof ctx.query.t === 'string' ? ctx.query.t : '';
    const now = svc.now();
    const check = token && UUID.test(roundId) ? verifyRecallToken(svc.config.masterKey, token, roundId, now) : { ok: false as const, reason: 'invalid' as const };
    ctx.set('Content-Security-Policy', contentSecurityPolicy(check.ok ? await cache.get(check.operatorId) : [], svc.config.publicUrl));
    // the link's token must not travel on to anywhere else
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Robots-Tag', 'noindex');
    ctx.type = 'text/html; charset=utf-8';
    const round = check.ok ? await recallRound(svc, check.operatorId, roundId) : undefined;
    if (!check.ok || !round) {
      const refusal = REFUSALS[check.ok ? 'unknown' : check.reason];
      ctx.status = refusal.status;
      ctx.body = refusalPage(refusal.title, refusal.text);
      return;
    }
    const page = await (html ??= readFile(path.join(PAGE_DIR, 'recall.html'), 'utf8'));
    ctx.body = page.replace(DATA_MARK, () => embedded({ round, linkExpiresAt: check.expiresAt.toISOString() }));
  });
  return router;
}

// JSON inside <script type="application/json">: a "<" written as \u003c can never close it
const embedded = (data: unknown) => JSON.stringify(data).replace(/</g, '\\u003c');

function refusalPage(title: string, text: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="dark">
  <title>${title}</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/play/assets/game.css">
</head>
<body>
  <main class="layout recall">
    <section class="card ended"><h2>${title}</h2><p>${text}</p></section>
  </main>
</body>
</html>
`;
}
