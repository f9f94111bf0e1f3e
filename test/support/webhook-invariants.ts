import type { Db } from '../../src/shared/platform/db/client.js';
import type { WebhookReceiver } from './webhook-receiver.js';

// The webhook invariants the fault suite checks once a deployment has quiesced (D31): no
// event lost, none invented, every one delivered or listed failed, each delivery signed and
// byte-identical across its attempts. Each finding is one readable line.

export async function checkWebhookInvariants(db: Db, operatorIds: string[], receiver: WebhookReceiver): Promise<string[]> {
  const inScope = { operatorId: { in: operatorIds } };
  const [events, rounds] = await Promise.all([
    db.webhookEvent.findMany({ where: inScope }),
    db.round.findMany({
      where: { ...inScope, demo: false, state: { in: ['SETTLED', 'VOIDED'] } },
      select: { id: true, state: true, bet: { select: { isFree: true, amountMicro: true } } },
    }),
  ]);
  // the receiver verifies every request's signature (contract 5.2) and keeps the ones that fail
  const found: string[] = receiver.violations.map((violation) => `webhook receiver: ${violation}`);
  // every finished real-money round was reported: its event was written with its change
  const reported = new Map<string, Set<string>>();
  for (const event of events) {
    const roundId = (event.data as { roundId?: string }).roundId;
    if (roundId) reported.set(roundId, new Set([...(reported.get(roundId) ?? []), event.eventType]));
  }
  for (const round of rounds) {
    const type = round.state === 'SETTLED' ? 'round.settled' : 'round.voided';
    if (!reported.get(round.id)?.has(type)) found.push(`round ${round.id} is ${round.state} but no ${type} event was written`);
  }
  // contract 8.4, D42: a round's events tell the stake the player paid, 0 for a free bet
  const stakeOf = new Map(rounds.map((round) => [round.id, (round.bet.isFree ? 0n : round.bet.amountMicro).toString()]));
  for (const event of events) {
    const data = event.data as { roundId?: string; totalBetsMicro?: string };
    if (event.eventType !== 'round.settled' && event.eventType !== 'round.voided') continue;
    const stake = data.roundId === undefined ? undefined : stakeOf.get(data.roundId);
    if (stake !== undefined && data.totalBetsMicro !== stake) found.push(`event ${event.id} (${event.eventType}) tells totalBetsMicro ${String(data.totalBetsMicro)}, its bet staked ${stake}`);
  }
  const byId = new Map(events.map((event) => [event.id, event]));
  const bodies = new Map<string, string>();
  for (const delivery of receiver.deliveries) {
    const { eventId, eventType, operatorId, data } = delivery.envelope;
    const event = byId.get(eventId);
    if (!event) {
      if (operatorIds.includes(operatorId)) found.push(`the receiver got event ${eventId}, which the outbox does not hold`);
      continue;
    }
    const first = bodies.get(eventId);
    if (first === undefined) bodies.set(eventId, delivery.body);
    else if (first !== delivery.body) found.push(`event ${eventId} arrived twice with different bodies`);
    if (eventType !== event.eventType || operatorId !== event.operatorId || JSON.stringify(data) !== JSON.stringify(event.data)) {
      found.push(`event ${eventId} arrived as ${delivery.body}, which is not the event written`);
    }
  }
  for (const event of events) {
    if (event.status === 'pending') found.push(`event ${event.id} (${event.eventType}) is still pending after ${event.attempts} attempt(s)`);
    if (event.status === 'delivered' && !bodies.has(event.id)) found.push(`event ${event.id} (${event.eventType}) is listed delivered but never arrived`);
  }
  return found;
}
