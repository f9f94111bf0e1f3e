import { startRoles } from './roles.js';
import { closeServiceContext, createServiceContext } from './platform/bootstrap.js';
import { ConfigError, loadConfig, type Config } from './platform/config.js';

// The process entry point (D12): validated config, the service context, the roles ROLES
// names, and a graceful stop on SIGTERM within 10 s.

const SHUTDOWN_DEADLINE_MS = 10_000;

async function main(): Promise<void> {
  let config: Config;
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
  const roles = await startRoles(svc, config);
  svc.logger.info({ roles: config.roles }, 'rgs started');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    svc.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS);
    force.unref();
    await roles.close();
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
