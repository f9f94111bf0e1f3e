import { randomBytes } from 'node:crypto';
import { closeServiceContext, createServiceContext } from '../../src/bootstrap.js';
import { loadConfig, type Role } from '../../src/shared/platform/config.js';
import { createLogger } from '../../src/shared/platform/logger.js';
import { startRoles } from '../../src/roles.js';
import type { ServiceContext } from '../../src/shared/game/context.js';
import { createOperator, type OnboardedOperator, type OperatorSettings } from '../../src/shared/game/operators/operators.js';
import { clearRedisPrefix } from '../../src/shared/platform/redis.js';
import { WalletSimulator } from '../../src/simulator/wallet-simulator.js';
import { signedRequest, type ApiResponse, type SignedRequestOptions } from './signed-client.js';

// A running service (api role, in process) against the real Postgres and Redis, with the
// project's wallet simulator as every test operator's wallet. The clock can be moved.
export type Harness = {
  svc: ServiceContext;
  baseUrl: string;
  wallet: WalletSimulator;
  shiftClock: (ms: number) => void;
  onboard: (settings?: Partial<OperatorSettings>) => Promise<TestOperator>;
  close: () => Promise<void>;
};

export type TestOperator = OnboardedOperator & {
  key: { kid: string; secret: string };
  request: (method: string, path: string, body?: unknown, options?: SignedRequestOptions) => Promise<ApiResponse>;
  launch: (overrides?: Record<string, unknown>, options?: SignedRequestOptions) => Promise<ApiResponse>;
  sessionBody: (overrides?: Record<string, unknown>) => Record<string, unknown>;
};

export const uniqueId = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;

// roles: the api alone by default; game tests run every role in this one process.
// logLines: where the service's log lines go, every level, as JSON lines (LOG_LEVEL silent
// otherwise); port: where it listens (a free port of its own by default), for a test whose
// browser must find the service at PUBLIC_URL (the page's connect-src, D24)
export async function startHarness(
  env: NodeJS.ProcessEnv = {},
  roles: readonly Role[] = ['api'],
  { logLines, port = 0 }: { logLines?: string[]; port?: number } = {},
): Promise<Harness> {
  const config = loadConfig({ ...process.env, WALLET_CALL_TIMEOUT_MS: '1000', ...env, ROLES: roles.join(',') });
  const svc = await createServiceContext(config);
  if (logLines) svc.logger = createLogger({ level: 'trace', destination: { write: (line: string) => void logLines.push(line) } });
  let offsetMs = 0;
  svc.now = () => new Date(Date.now() + offsetMs);
  const started = await startRoles(svc, config, port);
  const baseUrl = started.url!;
  const wallet = await WalletSimulator.start();

  const onboard = async (settings: Partial<OperatorSettings> = {}): Promise<TestOperator> => {
    const onboarded = await createOperator(svc.db, config.masterKey, uniqueId('op'), {
      walletUrl: wallet.url,
      currencies: ['EUR'],
      ...settings,
    });
    wallet.addCredential(onboarded.walletKeyId, onboarded.walletSignatureSecret);
    const key = { kid: onboarded.apiKeyId, secret: onboarded.apiSecret };
    const sessionBody = (overrides: Record<string, unknown> = {}) => ({
      operatorId: onboarded.operatorId,
      playerRef: uniqueId('player'),
      gameCode: 'dice',
      currency: 'EUR',
      lang: 'en',
      jurisdiction: 'MT',
      ...overrides,
    });
    const request = (method: string, path: string, body?: unknown, options?: SignedRequestOptions) =>
      signedRequest(baseUrl, key, method, path, body, options);
    return {
      ...onboarded,
      key,
      request,
      sessionBody,
      launch: (overrides, options) => request('POST', '/v1/session', sessionBody(overrides), options),
    };
  };

  return {
    svc,
    baseUrl,
    wallet,
    shiftClock: (ms) => {
      offsetMs += ms;
    },
    onboard,
    close: async () => {
      await started.close();
      await wallet.close();
      await closeServiceContext(svc);
      // a key prefix of its own is this harness's alone: its keys go with it (the run's
      // shared prefix is cleared when the run ends, global.ts)
      if (env.REDIS_KEY_PREFIX) await clearRedisPrefix(config.redisUrl, config.redisKeyPrefix);
    },
  };
}
