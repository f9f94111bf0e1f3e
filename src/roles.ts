import { createHealthApp } from './api/app.js';
import { startApi } from './api/server.js';
import { frameAncestorsCache, launchPageRoutes } from './realtime/launch-page.js';
import { replayPageRoutes } from './realtime/replay-page.js';
import { attachRealtime } from './realtime/server.js';
import type { Config } from './shared/platform/config.js';
import type { ServiceContext } from './shared/game/context.js';
import { LocalDebits } from './shared/game/bets/debit.js';
import { startHttpServer } from './shared/platform/http.js';
import { startBetWorkers, startRollbackWorkers, startSettleWorkers, startWebhookWorkers } from './workers/pools.js';
import { checkRegistry } from './workers/registry.js';
import { startScheduler } from './workers/scheduler.js';
import { checkTokenKey } from './shared/game/sessions/token.js';
import { Shutdown } from './shared/platform/shutdown.js';

// One binary, many roles (D12): ROLES picks what this process runs; all by default. The
// api and realtime roles share one HTTP listener on PORT. Each role adds what it closes to
// the process's shutdown, as a named step of a stage (platform/shutdown.ts declares their
// order, D12); main.ts adds the service context's and runs it on SIGTERM.
export type RunningRoles = {
  url: string | undefined;
  shutdown: Shutdown;
  // runs the shutdown; rejects, once every step ran, when one of them failed
  close: () => Promise<void>;
};

export async function startRoles(svc: ServiceContext, config: Config, port = config.port): Promise<RunningRoles> {
  // every job a queue carries has its one handler, whatever roles this process runs
  // (registry.ts); otherwise the process does not start
  checkRegistry();
  const { roles } = config;
  // D38: the api role signs session tokens; it does not start to sign them otherwise than
  // SESSION_TOKEN_ALG says (a change takes effect at `rgs migrate`, which rotates the key)
  if (roles.includes('api')) await checkTokenKey(svc);
  const shutdown = new Shutdown();
  let url: string | undefined;
  if (roles.includes('api') || roles.includes('realtime')) {
    // the player's pages (D16, D33), under one cache of the operators' frame-ancestors
    const cache = frameAncestorsCache(svc);
    const player = roles.includes('realtime') ? [launchPageRoutes(svc, cache), replayPageRoutes(svc, cache)] : [];
    const http = roles.includes('api')
      ? await startApi(svc, port, player)
      : await startHttpServer(port, createHealthApp(svc, 'public', player).callback());
    if (roles.includes('realtime')) {
      // with the bet role here too, this node debits its own players' bets, no queue between
      const localDebits = roles.includes('bet') && config.betHandoff === 'local' ? new LocalDebits(svc) : undefined;
      if (localDebits) {
        await localDebits.start();
        shutdown.add('work in flight', 'local debits', (until) => localDebits.close(until));
      }
      const realtime = attachRealtime(svc, http.server, localDebits);
      shutdown.add('player channel', 'player channel', () => realtime.close());
    }
    shutdown.add('listeners', 'public listener', () => http.close());
    url = http.url;
  }
  // D20, D25: HEALTH_PORT serves health and metrics to the deployment's own network, also
  // next to a public listener (in production /metrics is closed there without METRICS_TOKEN)
  if (config.healthPort !== undefined) {
    const health = await startHttpServer(config.healthPort, createHealthApp(svc, 'health').callback());
    shutdown.add('listeners', 'health listener', () => health.close());
  }
  const work = (name: string, running: { close: (inFlightUntil?: number) => Promise<void> }) =>
    shutdown.add('work in flight', name, (until) => running.close(until));
  if (roles.includes('scheduler')) work('scheduler', startScheduler(svc));
  if (roles.includes('bet')) work('bet workers', startBetWorkers(svc));
  if (roles.includes('settle')) work('settle workers', startSettleWorkers(svc));
  if (roles.includes('rollback')) work('rollback workers', startRollbackWorkers(svc));
  if (roles.includes('webhooks')) work('webhooks workers', startWebhookWorkers(svc));
  // D37: the process takes work from here on; its start-up until now (and for a short
  // warm-up after) is not overload
  svc.overload.ready();
  return {
    url,
    shutdown,
    close: async () => {
      const { failed } = await shutdown.run(svc.logger);
      if (failed.length > 0) throw new Error(`shutdown steps failed: ${failed.join(', ')}`);
    },
  };
}
