import { startApi, type RunningApi } from './api/server.js';
import { closeServiceContext, createServiceContext } from './shared/bootstrap.js';
import { ConfigError, loadConfig } from './shared/config.js';

// One binary, many roles (D12): ROLES picks what this process runs; all by default.
const SHUTDOWN_DEADLINE_MS = 10_000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const svc = await createServiceContext(config);
  const running: RunningApi[] = [];
  if (config.roles.includes('api')) running.push(await startApi(svc));
  svc.logger.info({ roles: config.roles }, 'rgs started');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    svc.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS);
    force.unref();
    await Promise.all(running.map((role) => role.close()));
    await closeServiceContext(svc);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`rgs failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});
