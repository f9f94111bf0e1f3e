import type { JSONSchemaType } from 'ajv';
import { compile, toInvalidRequest } from '../../shared/platform/validation.js';
import { DELIVERY_STATUSES, type DeliveryPage, type DeliveryStatus, type DeliveryView } from '../../shared/game/webhooks/deliveries.js';
import { EVENT_TYPES } from '../../shared/domain/events.js';
import type { ListingPosition } from '../../shared/game/reports/cursor.js';
import { instant, listingCursor, objectSchema, orNull, uuid } from './common.js';

// The webhook routes' requests and answers (D31, D38). D3: anything invalid is 400
// invalid_request; unknown parameters and fields are dropped (D9).

// the body of the two POSTs: empty, or a requestUuid that makes a retry safe (D17)
export type WebhookPostBody = { requestUuid?: string };

export const webhookPostSchema: JSONSchemaType<WebhookPostBody> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    requestUuid: { type: 'string', format: 'uuid', nullable: true, not: { type: 'null' }, description: 'idempotency key: a retry with it gets the same answer (D17)' },
  },
};

type DeliveriesQueryText = { status?: DeliveryStatus; cursor?: string; limit?: string };

export const deliveriesQuerySchema: JSONSchemaType<DeliveriesQueryText> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    status: { type: 'string', enum: DELIVERY_STATUSES, nullable: true, description: 'only the deliveries in this state (default: all)' },
    cursor: { type: 'string', minLength: 1, maxLength: 200, nullable: true, description: 'the nextCursor of the previous page' },
    limit: { type: 'string', pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$', nullable: true, description: 'deliveries per page, 1 to 500 (default 100)' },
  },
};

const validDeliveries = compile(deliveriesQuerySchema);
const DEFAULT_LIMIT = 100;

export type DeliveriesQuery = { status?: DeliveryStatus; after?: ListingPosition; limit: number };

export function readDeliveriesQuery(query: Record<string, string | string[] | undefined>): DeliveriesQuery {
  // a copy: ajv removes the unknown parameters from what it validates
  const copy: unknown = { ...query };
  if (!validDeliveries(copy)) throw toInvalidRequest(validDeliveries.errors ?? []);
  const after = listingCursor(copy.cursor);
  return { status: copy.status, after, limit: copy.limit === undefined ? DEFAULT_LIMIT : Number(copy.limit) };
}

export const eventIdSchema = objectSchema<{ eventId: string }>({ eventId: { ...uuid, description: 'the event, as its deliveries carry it (contract 6.1)' } });

export const deliveryPageSchema = objectSchema<DeliveryPage>({
  deliveries: {
    type: 'array',
    description: 'newest event first',
    items: objectSchema<DeliveryView>({
      eventId: uuid,
      eventType: { enum: EVENT_TYPES },
      occurredAt: instant,
      status: { enum: DELIVERY_STATUSES, description: 'pending: not yet acknowledged (or its endpoint disabled); delivered: a 2xx answered; failed: not acknowledged within 72 hours of the event (D31)' },
      attempts: { type: 'integer', minimum: 0, description: 'the attempts made, the one in flight included' },
      lastAttemptAt: orNull(instant),
      lastStatusCode: orNull({ type: 'integer', description: 'the HTTP status the endpoint answered last; null: no answer (a timeout, a network error)' }),
      lastError: orNull({
        type: 'string',
        description:
          'why the last attempt was not acknowledged, as a category only (timeout, dns_failed, connect_failed, connection_lost, tls_failed, network_error, address_refused, credential_unavailable, http_4xx, http_5xx, http_status:NNN), never an address or an error message; null once delivered or before any attempt',
      }),
      nextAttemptAt: orNull({ ...instant, description: 'when the next attempt is due (pending only)' }),
    }),
  },
  nextCursor: orNull({ type: 'string', description: 'pass as `cursor` for the next page; null on the last page' }),
});
