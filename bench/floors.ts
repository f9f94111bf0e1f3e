import { randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createRedis } from '../src/shared/platform/redis.js';
import { SIGNATURE_HEADERS, sign, signatureMatches, signedHeaders } from '../src/shared/wallet/signer.js';
import { summarize, type Summary } from './stats.js';

// The floors of the machine, measured before the service starts: a durable
// Postgres commit, a Redis round trip and a signed loopback HTTP call. Every service
// latency is a sum of such steps, so dividing a result by its floor compares runs made on
// machines (or moments) of different speed. Each is measured twice: back to back, and after
// an idle pause. On a virtual machine a process that slept is woken late, so a step that
// follows a pause (as every step of a lightly loaded service does) costs several times the
// back-to-back figure; the second set is the floor for latency at light load.

export type Floors = {
  iterations: number;
  postgresCommitMs: Summary;
  redisPingMs: Summary;
  loopbackHttpMs: Summary;
  // the same steps, each after IDLE_MS of doing nothing
  afterIdle: { idleMs: number; iterations: number; postgresCommitMs: Summary; redisPingMs: Summary; loopbackHttpMs: Summary };
  // what a commit means on this server: with either off, a commit does not wait for the disk
  postgres: { synchronousCommit: string; fsync: string };
};

// The same three steps timed while the players bet, every LOADED_PAUSE_MS: what each step
// costs on a box shared with the service at work (its Postgres backends, Redis, the
// players, the wallet), whose p99 a bet's own steps cannot beat.
export type LoadedSteps = { postgresCommitMs: number[]; redisPingMs: number[]; loopbackHttpMs: number[] };

const WARM_UP = 20;
const IDLE_MS = 10;
// a few steps every pause: about a hundred operations a second, little beside the load
const LOADED_PAUSE_MS = 25;

type Step = () => Promise<unknown>;
// the machine's three steps, each on a connection of its own
type Probes = { postgresCommit: Step; redisPing: Step; loopbackHttp: Step; close: () => Promise<void> };

export async function measureFloors(databaseUrl: string, redisUrl: string, iterations: number): Promise<Floors> {
  // fewer after a pause: each costs the pause too
  const idleIterations = Math.ceil(iterations / 3);
  const probes = await openProbes(databaseUrl, redisUrl);
  try {
    const [postgresCommitMs, postgresCommitAfterIdleMs] = await bothWays(iterations, idleIterations, probes.postgresCommit);
    const [redisPingMs, redisPingAfterIdleMs] = await bothWays(iterations, idleIterations, probes.redisPing);
    const [loopbackHttpMs, loopbackHttpAfterIdleMs] = await bothWays(iterations, idleIterations, probes.loopbackHttp);
    return {
      iterations,
      postgresCommitMs,
      redisPingMs,
      loopbackHttpMs,
      afterIdle: {
        idleMs: IDLE_MS,
        iterations: idleIterations,
        postgresCommitMs: postgresCommitAfterIdleMs,
        redisPingMs: redisPingAfterIdleMs,
        loopbackHttpMs: loopbackHttpAfterIdleMs,
      },
      postgres: await postgresSettings(databaseUrl),
    };
  } finally {
    await probes.close();
  }
}

// Times the three steps, one after another every LOADED_PAUSE_MS, until stopped.
export async function sampleUnderLoad(databaseUrl: string, redisUrl: string): Promise<{ stop: () => Promise<LoadedSteps> }> {
  const probes = await openProbes(databaseUrl, redisUrl);
  const samples: LoadedSteps = { postgresCommitMs: [], redisPingMs: [], loopbackHttpMs: [] };
  let running = true;
  const loop = (async () => {
    while (running) {
      samples.postgresCommitMs.push(await timedOnce(probes.postgresCommit));
      samples.redisPingMs.push(await timedOnce(probes.redisPing));
      samples.loopbackHttpMs.push(await timedOnce(probes.loopbackHttp));
      await sleep(LOADED_PAUSE_MS);
    }
  })();
  return {
    stop: async () => {
      running = false;
      try {
        await loop;
      } finally {
        await probes.close();
      }
      return samples;
    },
  };
}

async function timedOnce(step: Step): Promise<number> {
  const started = performance.now();
  await step();
  return performance.now() - started;
}

// back to back, then each after a pause
async function bothWays(iterations: number, idleIterations: number, step: Step): Promise<[Summary, Summary]> {
  return [await timed(iterations, step, 0), await timed(idleIterations, step, IDLE_MS)];
}

async function timed(iterations: number, step: Step, pauseMs: number): Promise<Summary> {
  for (let i = 0; i < WARM_UP; i++) await step();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    if (pauseMs > 0) await sleep(pauseMs);
    samples.push(await timedOnce(step));
  }
  return summarize(samples);
}

async function openProbes(databaseUrl: string, redisUrl: string): Promise<Probes> {
  const [postgres, redis, http] = await Promise.all([postgresCommit(databaseUrl), redisPing(redisUrl), loopbackHttp()]);
  return {
    postgresCommit: postgres.step,
    redisPing: redis.step,
    loopbackHttp: http.step,
    close: async () => {
      await Promise.all([postgres.close(), redis.close(), http.close()]);
    },
  };
}

// one autocommitted INSERT into a logged table: a real commit, WAL flush included (a
// temporary or unlogged table would skip exactly the part being measured); each probe has a
// table of its own, so the idle floors and the sampler under load never share one
async function postgresCommit(databaseUrl: string): Promise<{ step: Step; close: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const table = `bench_floor_${randomUUID().replaceAll('-', '')}`;
  await client.query(`CREATE TABLE ${table} (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())`);
  return {
    step: () => client.query(`INSERT INTO ${table} DEFAULT VALUES`),
    close: async () => {
      try {
        await client.query(`DROP TABLE ${table}`);
      } finally {
        await client.end();
      }
    },
  };
}

async function postgresSettings(databaseUrl: string): Promise<Floors['postgres']> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ synchronous_commit: string; fsync: string }>(
      `SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync`,
    );
    return { synchronousCommit: rows[0]!.synchronous_commit, fsync: rows[0]!.fsync };
  } finally {
    await client.end();
  }
}

async function redisPing(redisUrl: string): Promise<{ step: Step; close: () => Promise<void> }> {
  const redis = createRedis(redisUrl, { enableOfflineQueue: true });
  return {
    step: () => redis.ping(),
    close: async () => redis.disconnect(),
  };
}

// contract 5.1 both ways: the client signs, the server verifies, over one kept-alive
// connection, as the service's wallet client and an operator's wallet do
export async function loopbackHttp(): Promise<{ step: Step; close: () => Promise<void> }> {
  const secret = 'bench-floor-secret';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const expected = sign(secret, req.method ?? '', req.url ?? '', String(req.headers[SIGNATURE_HEADERS.timestamp]), Buffer.concat(chunks));
      const ok = signatureMatches(expected, String(req.headers[SIGNATURE_HEADERS.signature]));
      const body = JSON.stringify({ status: ok ? 'RS_OK' : 'RS_ERROR_INVALID_SIGNATURE' });
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const step = () =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ requestUuid: randomUUID(), amountMicro: '100000' });
      const headers = { 'content-type': 'application/json', ...signedHeaders('floor', secret, 'POST', '/wallet/bet', body) };
      const req = request({ host: '127.0.0.1', port, path: '/wallet/bet', method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`loopback floor answered ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  return {
    step,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
