import { QueueEvents } from 'bullmq';
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { setGameConfig } from '../../src/shared/operators/game-config.js';
import { QUEUE_NAMES } from '../../src/shared/queues.js';
import { createRedis } from '../../src/shared/redis.js';
import { startHarness, type Harness } from '../support/harness.js';
import { Player } from '../support/player.js';

// The engine clock's ticks (D1, issue 6): a tick due on the elected scheduler's own timer
// runs there, without the queue handing it out; in a process that does not lead, the same
// tick is left to the queue, whose worker at the leader runs it. Either way each phase ends
// when it was announced. Which ticks the queue handed out is read from BullMQ's own event
// stream in Redis.
describe('engine clock ticks', function () {
  this.timeout(30_000);
  let h: Harness;
  let events: QueueEvents;
  const handedOut: string[] = [];

  before(async () => {
    h = await startHarness({}, ['api', 'realtime', 'scheduler', 'bet', 'settle', 'rollback']);
    events = new QueueEvents(QUEUE_NAMES.engine, {
      connection: createRedis(h.svc.config.redisUrl, { maxRetriesPerRequest: null, enableOfflineQueue: true }),
      prefix: h.svc.config.redisKeyPrefix,
    });
    await events.waitUntilReady();
    events.on('active', ({ jobId }) => handedOut.push(jobId));
    while (!h.svc.ticks.isLeading) await delay(20);
  });
  after(async () => {
    await events.close();
    await h.close();
  });

  // a player at a fresh engine, and the announcements of its first cycle up to the second's
  // betting window
  async function twoCycles() {
    const operator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 400, rollingWindowMs: 300, cooldownMs: 200 });
    const launch = await operator.launch();
    expect(launch.status, launch.text).to.equal(200);
    const player = await Player.connect(h.baseUrl, launch.body.sessionToken);
    try {
      const open = await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
      const rolling = await player.waitFor('round_state', (p) => p.cycleId === open.cycleId && p.phase === 'ROLLING');
      const result = await player.waitFor('round_state', (p) => p.cycleId === open.cycleId && p.phase === 'RESULT');
      const cooldown = await player.waitFor('round_state', (p) => p.cycleId === open.cycleId && p.phase === 'COOLDOWN');
      const next = await player.waitFor('round_state', (p) => p.cycleId !== open.cycleId && p.phase === 'BETTING_OPEN');
      // every phase ended when it was announced to end
      expect(Date.parse(rolling.ts) - Date.parse(open.phaseEndsAt)).to.be.within(-5, 150);
      expect(Date.parse(result.ts) - Date.parse(rolling.phaseEndsAt)).to.be.within(-5, 150);
      expect(Date.parse(next.ts) - Date.parse(cooldown.phaseEndsAt)).to.be.within(-5, 150);
      // the queue's events trail the ticks a little
      await delay(300);
      return { first: open.cycleId as string, second: next.cycleId as string };
    } finally {
      player.close();
    }
  }

  const ticksOf = (cycleId: string) => handedOut.filter((jobId) => jobId.startsWith(cycleId)).sort();

  it('the leader runs the ticks due on its own timers itself: the queue hands out only the first cycle opening', async () => {
    const { first, second } = await twoCycles();
    // the player's connection started the clock from the web role, through the queue
    expect(ticksOf(first)).to.deep.equal([`${first}-PENDING`]);
    expect(ticksOf(second)).to.deep.equal([]);
  });

  it('a process that does not lead leaves its due ticks to the queue, and the leader runs them on time', async () => {
    h.svc.ticks.lead(false);
    try {
      const { first } = await twoCycles();
      expect(ticksOf(first)).to.deep.equal([`${first}-BETTING_OPEN`, `${first}-COOLDOWN`, `${first}-PENDING`, `${first}-ROLLING`]);
    } finally {
      h.svc.ticks.lead(true);
    }
  });
});
