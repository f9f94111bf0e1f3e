import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { openSkeleton, type Skeleton, type SkeletonSample, type SkeletonThreadRequest, type SkeletonThreadSetup } from './skeleton.js';
import { answerRequests } from './thread.js';

// The bet path's skeleton on a thread of its own (skeleton.ts): its timings then carry
// none of the load generator's own delays, only the box's.

const setup = workerData as SkeletonThreadSetup;
let skeleton: Skeleton | undefined;
let running: Promise<SkeletonSample[]> | undefined;
let stopping = false;

async function sample(open: Skeleton): Promise<SkeletonSample[]> {
  const samples: SkeletonSample[] = [];
  while (!stopping) {
    samples.push(await open.once());
    await sleep(setup.pauseMs);
  }
  return samples;
}

answerRequests<SkeletonThreadRequest>(async (request) => {
  switch (request.kind) {
    case 'start':
      skeleton = await openSkeleton(setup.databaseUrl, setup.redisUrl, setup.redisPrefix, setup.queueHop);
      running = sample(skeleton);
      // a failed sample is reported when the run asks to stop, not as an unhandled rejection
      running.catch(() => undefined);
      return null;
    case 'stop': {
      stopping = true;
      try {
        return (await running) ?? [];
      } finally {
        await skeleton?.close();
      }
    }
  }
}, parentPort!);
