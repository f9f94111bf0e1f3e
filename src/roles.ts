import { createHealthApp } from './api/app.js';
import { startApi } from './api/server.js';
import { launchPageRoutes } from './realtime/launch-page.js';
import { attachRealtime } from './realtime/server.js';
import type { Config } from './shared/config.js';
import type { ServiceContext } from './shared/context.js';
import { startHttpServer } from './shared/http/server.js';
import { startBetWorkers, startRollbackWorkers, startSettleWorkers } from './workers/pools.js';
import { startScheduler } from './workers/scheduler.js';

// One binary, many roles (D12): ROLES picks what this process runs; all by default. The
// api and realtime roles share one HTTP listener on PORT.
export type Stoppable = { close: () => Promise<void> };

export type RunningRoles = { running: Stoppable[]; url: string | undefined };

export async function startRoles(svc: ServiceContext, config: Config, port = config.port): Promise<RunningRoles> {
  const { roles } = config;
  const running: Stoppable[] = [];
  let url: string | undefined;
  if (roles.includes('api') || roles.includes('realtime')) {
    const player = roles.includes('realtime') ? [launchPageRoutes(svc)] : [];
    const http = roles.includes('api')
      ? await startApi(svc, port, player)
      : await startHttpServer(port, createHealthApp(svc, player).callback());
    // sockets close before the listener, so that players get their disconnect first
    if (roles.includes('realtime')) running.push(attachRealtime(svc, http.server));
    running.push(http);
    url = http.url;
  } else if (config.healthPort !== undefined) {
    running.push(await startHttpServer(config.healthPort, createHealthApp(svc).callback()));
  }
  if (roles.includes('scheduler')) running.push(startScheduler(svc));
  if (roles.includes('bet')) running.push(startBetWorkers(svc));
  if (roles.includes('settle')) running.push(startSettleWorkers(svc));
  if (roles.includes('rollback')) running.push(startRollbackWorkers(svc));
  return { running, url };
}

