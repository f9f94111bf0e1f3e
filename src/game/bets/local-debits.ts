import type { ServiceContext } from '../../platform/context.js';
import type { Redis } from '../../platform/redis.js';
import { finishedInTime } from '../../platform/shutdown.js';
import { BetDesk, type BetAck } from './bets.js';
import type { AuditedDebit } from '../../wallet/client.js';
import type { BetTicket } from './ticket.js';

// A process that runs both the realtime and the bet role debits the bets its own players
// place itself, with no queue between: an acknowledgement waits for no BullMQ add, no bet
// worker's pick-up and no verdict sent back through Redis. Each such bet row names the node
// (bets.debit_node, written with the row), and the node keeps a heartbeat key in Redis
// while it lives. Recovery leaves a PENDING bet alone while its node's heartbeat lives;
// once the node is gone (killed, or its heartbeat lapsed) the debit is uncertain and rolled
// back (contract 7.1), as it is for a bet worker's job whose queue lock lapsed
// (recovery.ts).

// as BullMQ's job lock (pools.ts LOCKING): renewed every second,
// lapsing 3 s after the process stops renewing it
const HEARTBEAT_EVERY_MS = 1000;
const HEARTBEAT_TTL_MS = 3000;

const heartbeatKey = (node: string) => `debit-node:${node}`;

// the nodes among these whose heartbeat lives (keys under the deployment's prefix)
export async function liveDebitNodes(redis: Redis, nodes: string[]): Promise<Set<string>> {
  if (nodes.length === 0) return new Set();
  const beats = await redis.mget(nodes.map(heartbeatKey));
  return new Set(nodes.filter((_, i) => beats[i] !== null));
}

export class LocalDebits {
  readonly node: string;
  private readonly desk: BetDesk;
  private readonly inFlight = new Set<Promise<BetAck>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly svc: ServiceContext) {
    this.node = svc.emitter.nodeId;
    this.desk = new BetDesk(svc);
  }

  // the heartbeat lives before the first bet names this node
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_EVERY_MS);
  }

  // A bet whose handling fails is answered wallet_timeout and stays PENDING: recovery
  // resolves it as uncertain once this node is gone, or once it is stale (recovery.ts).
  // audited: the debit's audit row, written with the bet row (placement.ts)
  debit(ticket: BetTicket, audited?: AuditedDebit): Promise<BetAck> {
    const { svc } = this;
    const verdict = this.desk.process(ticket, { audited }).catch((err: unknown): BetAck => {
      svc.logger.error({ err, betId: ticket.betId }, 'bet could not be handled; recovery resolves it');
      return { ok: false, reason: 'wallet_timeout' };
    });
    this.inFlight.add(verdict);
    svc.metrics.localDebitsInFlight.inc();
    void verdict.finally(() => {
      this.inFlight.delete(verdict);
      svc.metrics.localDebitsInFlight.dec();
    });
    return verdict;
  }

  // D12: the debits in flight finish first; one still running after that is left to
  // recovery, as a bet worker's job is left to another worker
  async close(): Promise<void> {
    const finished = await finishedInTime(Promise.all(this.inFlight));
    clearInterval(this.timer);
    if (!finished) this.svc.logger.warn({ bets: this.inFlight.size }, 'debits still running at shutdown are left to recovery');
    await this.svc.redis.del(heartbeatKey(this.node)).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    await this.svc.redis
      .set(heartbeatKey(this.node), '1', 'PX', HEARTBEAT_TTL_MS)
      .catch((err: Error) => this.svc.logger.warn({ err: err.message }, 'debit node heartbeat not renewed'));
  }
}
