import type { Db } from '../../platform/db/client.js';
import { EVENT_TYPES, isEventType, type EventType } from '../../domain/events.js';
import { walletUrlFormatProblem, walletUrlProductionProblem } from '../../platform/address-policy.js';

// D31: an operator's webhook endpoint, one per operator, set with `rgs webhook set`. Its URL
// follows the wallet URL's rules (D25): http(s), no query, fragment or credentials anywhere;
// in production https: and a public address unless --url-private-allowed. A disabled
// endpoint gets no new events and is sent none of its pending ones: they stay pending, and
// setting the endpoint again resumes them (those older than 72 hours get one attempt).

export class WebhookInputError extends Error {
  override name = 'WebhookInputError';
}

export type WebhookSettings = { url: string; events?: string[]; urlPrivateAllowed?: boolean };

export type WebhookEndpointView = {
  operatorId: string;
  url: string;
  urlPrivateAllowed: boolean;
  events: EventType[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
};

type Row = { operatorId: string; url: string; urlPrivateAllowed: boolean; events: string[]; enabled: boolean; createdAt: Date; updatedAt: Date };

const view = (row: Row): WebhookEndpointView => ({
  operatorId: row.operatorId,
  url: row.url,
  urlPrivateAllowed: row.urlPrivateAllowed,
  events: row.events.filter(isEventType),
  enabled: row.enabled,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

async function existingOperator(db: Db, operatorId: string): Promise<void> {
  if (!(await db.operator.findUnique({ where: { id: operatorId }, select: { id: true } }))) {
    throw new WebhookInputError(`operator ${operatorId} does not exist`);
  }
}

// Sets (or replaces) the endpoint and enables it. Left out: every event type (D31), and no
// private address in production.
export async function setWebhookEndpoint(
  db: Db,
  operatorId: string,
  settings: WebhookSettings,
  { production = false }: { production?: boolean } = {},
): Promise<WebhookEndpointView> {
  const problem = walletUrlFormatProblem(settings.url, 'webhook URL');
  if (problem) throw new WebhookInputError(problem);
  const events = settings.events ?? [...EVENT_TYPES];
  const unknown = events.filter((type) => !isEventType(type));
  if (unknown.length > 0) throw new WebhookInputError(`unknown event type ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`);
  if (events.length === 0) throw new WebhookInputError(`--events names no event type (known: ${EVENT_TYPES.join(', ')})`);
  const urlPrivateAllowed = settings.urlPrivateAllowed ?? false;
  if (production) {
    const refused = await walletUrlProductionProblem(settings.url, urlPrivateAllowed, 'webhook URL', '--url-private-allowed');
    if (refused) throw new WebhookInputError(refused);
  }
  await existingOperator(db, operatorId);
  // in the order of EVENT_TYPES, each once
  const chosen = EVENT_TYPES.filter((type) => events.includes(type));
  const fields = { url: settings.url, urlPrivateAllowed, events: chosen, enabled: true };
  return view(await db.webhookEndpoint.upsert({ where: { operatorId }, create: { operatorId, ...fields }, update: fields }));
}

export async function showWebhookEndpoint(db: Db, operatorId: string): Promise<WebhookEndpointView> {
  await existingOperator(db, operatorId);
  const row = await db.webhookEndpoint.findUnique({ where: { operatorId } });
  if (!row) throw new WebhookInputError(`operator ${operatorId} has no webhook endpoint (rgs webhook set)`);
  return view(row);
}

// Stops deliveries: no new events are recorded, pending ones wait (D31).
export async function disableWebhookEndpoint(db: Db, operatorId: string): Promise<WebhookEndpointView> {
  await existingOperator(db, operatorId);
  const found = await db.webhookEndpoint.findUnique({ where: { operatorId } });
  if (!found) throw new WebhookInputError(`operator ${operatorId} has no webhook endpoint (rgs webhook set)`);
  return view(await db.webhookEndpoint.update({ where: { operatorId }, data: { enabled: false } }));
}
