import { startRoles } from './roles.js';
import { closeServiceContext, createServiceContext } from './bootstrap.js';
import { ConfigError, loadConfig, type Config } from './shared/platform/config.js';

// The process entry point (D12): validated config, the service context, the roles ROLES
// names, and a graceful stop on SIGTERM within 10 s (SHUTDOWN_DEADLINE_MS, the one deadline
// of platform/shutdown.ts).

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

  // the connections close last, once nothing uses them
  roles.shutdown.add('connections', 'service context', () => closeServiceContext(svc));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    svc.logger.info({ signal }, 'shutting down');
    // every step runs, within the one deadline, even after one failed; a failed step (logged
    // by its name) makes the exit code 1, as a stop that did not finish always has
    const { failed } = await roles.shutdown.run(svc.logger);
    process.exit(failed.length > 0 ? 1 : 0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`rgs failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});
