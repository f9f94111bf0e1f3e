import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { ServiceContext } from '../shared/game/context.js';
import { isKnownGame } from '../shared/domain/games/index.js';
import { sessionTokens } from '../shared/game/sessions/token.js';
import { operatorFrameAncestors } from '../shared/game/operators/operators.js';

// The launch page (contract 1, 4.4; D16): `/play/{gameCode}?token=...` and its static
// assets, authenticated by the session token rather than an operator signature. The page
// answers with the operator's frame-ancestors (cached at most 60 s, D16) and a strict
// script and style policy: every script and style is a file served from here.

export const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
export const FRAME_ANCESTORS_CACHE_MS = 60_000;

const ASSET_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

export class FrameAncestorsCache {
  private readonly entries = new Map<string, { origins: string[]; at: number }>();

  constructor(
    private readonly load: (operatorId: string) => Promise<string[]>,
    private readonly clock: () => number = Date.now,
  ) {}

  async get(operatorId: string): Promise<string[]> {
    const cached = this.entries.get(operatorId);
    if (cached && this.clock() - cached.at < FRAME_ANCESTORS_CACHE_MS) return cached.origins;
    const origins = await this.load(operatorId);
    this.entries.set(operatorId, { origins, at: this.clock() });
    return origins;
  }
}

// D24: the page connects only to the service, as PUBLIC_URL names it (its Socket.IO channel
// is a WebSocket to that origin): never to any ws:/wss: host a script might be led to. Its
// scripts (the language files too, imported on demand) and its one stylesheet are files
// served from here; its only image is the empty data: icon (its exit icon is inline
// markup). The exit to the operator's returnUrl (contract 2.2) is a link the player
// follows, which no directive governs.
export function contentSecurityPolicy(frameAncestors: string[], publicUrl: string): string {
  const { protocol, host } = new URL(publicUrl);
  const socketScheme = protocol === 'https:' ? 'wss:' : 'ws:';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    'img-src data:',
    `connect-src ${protocol}//${host} ${socketScheme}//${host}`,
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${["'self'", ...frameAncestors].join(' ')}`,
  ].join('; ');
}

export function launchPageRoutes(svc: ServiceContext, cache = frameAncestorsCache(svc)) {
  const router = new Router();
  let html: Promise<string> | undefined;

  router.get('/play/:gameCode', async (ctx) => {
    const gameCode = ctx.params.gameCode ?? '';
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    // a token that cannot be checked now (the database away) frames like an unreadable one
    const check = token ? await sessionTokens(svc).verify(token, Math.floor(svc.now().getTime() / 1000)).catch(() => null) : null;
    // the frame-ancestors of the token's operator; without a readable token only 'self'
    const operatorId = check?.ok ? check.claims.operatorId : undefined;
    ctx.set('Content-Security-Policy', contentSecurityPolicy(operatorId ? await cache.get(operatorId) : [], svc.config.publicUrl));
    ctx.set('Referrer-Policy', 'no-referrer');
    if (!isKnownGame(gameCode)) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'unknown game';
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    // the page reads its token, then the channel refuses it if it is bad (D4). One page plays
    // every game (D39): its body names the address's game, a code of the catalogue (checked
    // above), so that the first paint is that game's; the page then follows its session's
    const page = await (html ??= readFile(path.join(PAGE_DIR, 'index.html'), 'utf8'));
    ctx.body = page.replace('data-game="dice"', `data-game="${gameCode}"`);
  });

  router.get('/play/assets/:file', async (ctx) => {
    const file = ctx.params.file ?? '';
    const type = ASSET_TYPES[path.extname(file)];
    if (!type || !/^[a-z0-9-]+\.[a-z]+$/.test(file)) {
      ctx.status = 404;
      return;
    }
    try {
      ctx.body = await readFile(path.join(PAGE_DIR, file));
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=300');
    } catch {
      ctx.status = 404;
    }
  });
  return router;
}

// the operator's frame-ancestors as the database has them (D16), for the launch and recall pages
export function frameAncestorsCache(svc: ServiceContext) {
  return new FrameAncestorsCache((operatorId) => operatorFrameAncestors(svc.db, operatorId));
}
