import { ERRORS, SIGNATURE_ERROR_CODES, type ErrorCode, type ErrorSpec } from '../shared/platform/errors.js';
import { BUCKETS, type BucketSpec } from '../shared/platform/rate-limit.js';
import { RS_STATUSES, STATUS_CLASSES, classifyStatus, type WalletEndpoint } from '../shared/domain/wallet-status.js';
import { SIGNATURE_HEADERS } from '../shared/wallet/signer.js';
import { WALLET_REQUEST_SCHEMAS, walletResponseSchema } from '../shared/wallet/schemas.js';
import { WALLET_ANSWER_MAX_BYTES } from '../shared/wallet/client.js';
import { IDEMPOTENCY_RETENTION_MS, REPLAY_HEADER } from './middleware/idempotency.js';
import { MAX_BODY_BYTES } from './middleware/raw-body.js';
import { HSTS } from './middleware/security-headers.js';
import { shedWhileBusy } from './load-shedding.js';
import type { Schema } from './schemas/common.js';
import { uuidPathParameter } from './schemas/common.js';
import { disputePackSchema, jwksSchema } from './schemas/evidence.js';
import { liveSchema, readySchema } from './schemas/health.js';
import { KEYS_PATH, TOKEN_KEYS_PATH } from './routes/keys.js';
import { tokenJwksSchema } from './schemas/token-keys.js';
import { roundProofSchema } from './schemas/proof.js';
import { replayUrlSchema } from './schemas/recall.js';
import {
  ggrSchema,
  listQuerySchema,
  reportQuerySchema,
  roundDetailSchema,
  roundListSchema,
  roundQuerySchema,
  walletCallsSchema,
} from './schemas/reconciliation.js';
import { launchResponseSchema, sessionCreateSchema, sessionTerminateSchema, terminateResponseSchema } from './schemas/session.js';
import { catalogueSchema } from './schemas/games.js';
import { campaignTotalsSchema, createdCampaignSchema, freeBetCreateSchema, grantPageSchema, grantsQuerySchema } from './schemas/freebets.js';
import { deliveriesQuerySchema, deliveryPageSchema, eventIdSchema, webhookPostSchema } from './schemas/webhooks.js';
import { EVENT_DATA_SCHEMAS, envelopeSchema, eventDataSchemaName } from './schemas/events.js';
import { EVENT_TYPES, type EventType } from '../shared/domain/events.js';
import { DELIVERY_WINDOW_MS, DELIVERY_TIMEOUT_MS, RETRY_DELAYS_MS } from '../shared/game/webhooks/schedule.js';

// The OpenAPI 3.1 document of the operator API, generated from what the service runs: the
// request schemas the routes validate with (ajv, src/shared/platform/validation.ts), the response
// schemas beside them, the one error table (src/shared/platform/errors.ts), the signing headers,
// rate limits and wallet protocol. `npm run openapi` writes it to docs/openapi.json; the
// service serves it at GET /v1/openapi.json; test/unit/openapi.test.ts fails when the
// committed file differs from what this produces.

// contract 9: the contract description version
export const API_VERSION = '1.1.0';
export const OPENAPI_PATH = '/v1/openapi.json';

type Json = Record<string, unknown>;

// ajv's dialect to JSON Schema 2020-12 (the dialect of OpenAPI 3.1). ajv's JSONSchemaType
// makes every optional property `nullable: true`; whether null is then accepted depends on
// the schema (D3: the 2.2 fields refuse it with `not: {type: "null"}`, an enum without null
// refuses it), so each is written as what ajv accepts. The inbound ajv removes unknown fields
// (D9: ignored, never echoed), so `additionalProperties: false` does not refuse them and is
// left out; `inQuery`: a query string never holds a null.
function toJsonSchema(schema: unknown, inQuery = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => toJsonSchema(item, inQuery));
  if (!schema || typeof schema !== 'object') return schema;
  const { nullable, additionalProperties, ...rest } = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === 'required' && Array.isArray(value) && value.length === 0) continue;
    out[key] = key === 'properties' ? mapValues(value as Json, (v) => toJsonSchema(v, inQuery)) : toJsonSchema(value, inQuery);
  }
  if (additionalProperties !== undefined && additionalProperties !== false) out.additionalProperties = toJsonSchema(additionalProperties, inQuery);
  if (nullable === true) {
    const refusesNull = isNotNull(out.not) || (Array.isArray(out.enum) && !out.enum.includes(null));
    if (isNotNull(out.not)) delete out.not;
    if (!refusesNull && !inQuery && typeof out.type === 'string') out.type = [out.type, 'null'];
  }
  return out;
}

const isNotNull = (schema: unknown) =>
  !!schema && typeof schema === 'object' && Object.keys(schema).length === 1 && (schema as Json).type === 'null';

const mapValues = (record: Json, fn: (value: unknown) => unknown): Json =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));

// a query schema's properties as OpenAPI parameters
function queryParameters(schema: unknown): Json[] {
  const { properties } = toJsonSchema(schema, true) as { properties: Record<string, Json> };
  return Object.entries(properties).map(([name, { description, ...fieldSchema }]) => ({
    name,
    in: 'query',
    required: false,
    ...(description === undefined ? {} : { description }),
    schema: fieldSchema,
  }));
}

// --- security ---------------------------------------------------------------------------

const CANONICAL =
  'Canonical string = METHOD LF PATH LF TIMESTAMP LF SHA256_HEX(BODY): the upper-case method, the exact path as the receiver ' +
  'sees it (no query, no host), the X-Rgs-Timestamp header as sent, and the lower-case hex SHA-256 of the exact body bytes ' +
  '(of the empty body when there is none). X-Rgs-Signature = base64(HMAC-SHA256(secret, canonical)), the key being the UTF-8 ' +
  'text of the secret exactly as issued (contract 5.1, D6).';

function signingSchemes(prefix: 'Rgs' | 'Wallet', credential: string): Json {
  return {
    [`${prefix}KeyId`]: { type: 'apiKey', in: 'header', name: titleCase(SIGNATURE_HEADERS.keyId), description: `The kid of the ${credential} (contract 5.3).` },
    [`${prefix}Timestamp`]: {
      type: 'apiKey',
      in: 'header',
      name: titleCase(SIGNATURE_HEADERS.timestamp),
      description: 'Integer unix seconds at send time; refused outside the receiver\'s window (30 s by default, contract 5.2, 8.1).',
    },
    [`${prefix}Signature`]: {
      type: 'apiKey',
      in: 'header',
      name: titleCase(SIGNATURE_HEADERS.signature),
      description: `base64 HMAC-SHA256 under the ${credential}'s secret. ${CANONICAL}`,
    },
  };
}

const titleCase = (header: string) => header.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());

const SIGNED = [{ RgsKeyId: [], RgsTimestamp: [], RgsSignature: [] }];
const WALLET_SIGNED = [{ WalletKeyId: [], WalletTimestamp: [], WalletSignature: [] }];

// --- errors -----------------------------------------------------------------------------

const errorSchemaName = (code: ErrorCode) => `Error.${code}`;

function errorSchema(code: ErrorCode): Json {
  const spec: ErrorSpec = ERRORS[code];
  const fields = spec.fields ?? {};
  return {
    type: 'object',
    description: `${spec.meaning}. What to do: ${spec.action}.`,
    required: ['error', 'message', ...Object.keys(fields)],
    properties: {
      error: { const: code },
      message: { type: 'string', description: 'human-readable detail; never echoes a value of the request (D3)' },
      ...fields,
    },
  };
}

// a code an operation answers, with its table status, or with the code's alsoStatus
// (ErrorSpec) on the operations that answer that instead
type RouteError = ErrorCode | { code: ErrorCode; status: number };
const codeOf = (error: RouteError): ErrorCode => (typeof error === 'string' ? error : error.code);

// the error responses of an operation, one per HTTP status, each the union of its codes
function errorResponses(errors: readonly RouteError[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const error of errors) {
    const code = codeOf(error);
    const status = typeof error === 'string' ? ERRORS[code].status : error.status;
    if (typeof error !== 'string' && (ERRORS[code] as ErrorSpec).alsoStatus?.status !== status) throw new Error(`${code} does not answer ${status}`);
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) byStatus.set(status, [...list, code]);
  }
  const responses: Json = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const refs = list.map((code) => ({ $ref: `#/components/schemas/${errorSchemaName(code)}` }));
    const headers: Json = {};
    for (const code of list) {
      for (const [name, schema] of Object.entries((ERRORS[code] as ErrorSpec).headers ?? {})) {
        const { description, ...headerSchema } = schema;
        headers[name] = { description, required: true, schema: headerSchema };
      }
    }
    responses[String(status)] = {
      description: list.map((code) => `\`${code}\``).join(', '),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: {
        'application/json': {
          schema:
            refs.length === 1
              ? refs[0]
              : {
                  oneOf: refs,
                  discriminator: {
                    propertyName: 'error',
                    mapping: Object.fromEntries(list.map((code) => [code, `#/components/schemas/${errorSchemaName(code)}`])),
                  },
                },
        },
      },
    };
  }
  return responses;
}

// --- operations -------------------------------------------------------------------------

type Operation = {
  method: 'get' | 'post' | 'delete';
  path: string; // OpenAPI template; the router's `:name` is `{name}`
  operationId: string;
  tag: 'sessions' | 'games' | 'freebets' | 'rounds' | 'reports' | 'webhooks' | 'health' | 'documentation';
  summary: string;
  description?: string;
  // the signed-request stage of /v1 (IP allow-list, raw body, signature; contract 5.2-5.4)
  signed: boolean;
  bucket?: BucketSpec;
  // whose bucket: the signing operator's (every signed route), or the caller IP's
  bucketPer?: 'client IP';
  // D17: a requestUuid in the body makes the call idempotent
  idempotent?: boolean;
  pathParameters?: Record<string, string>;
  query?: unknown;
  body?: { schema: unknown; required: boolean };
  // the success answer; none for a route that has none in this version
  ok?: { status: number; description: string; schema: Schema; contentType?: string };
  // the codes of this route beyond those of its stages
  errors: RouteError[];
  security?: Json[];
  // responses that are not errors of the table (e.g. /readyz's 503)
  responses?: Json;
};

// the signed stage: a failed signature or allow-list check, an unreadable or oversized body;
// replay protection only on POST (D17); Postgres or Redis unavailable; the process past its
// load bound (D37)
function stageCodes(op: Operation): ErrorCode[] {
  const codes: ErrorCode[] = ['internal_error'];
  if (op.signed) {
    const signature = SIGNATURE_ERROR_CODES.filter((code) => op.method === 'post' || code !== 'replayed_signature');
    codes.push('invalid_request', ...signature, 'ip_not_allowed', 'payload_too_large', 'service_unavailable');
    // D37: only the routes that start work are refused while busy
    if (shedWhileBusy(op.method, op.path.replace(/\{(\w+)\}/g, ':$1'))) codes.push('service_busy');
  }
  if (op.bucket) codes.push('rate_limited', 'service_unavailable');
  if (op.idempotent) codes.push('idempotency_key_reused');
  return codes;
}

const rateText = (bucket: BucketSpec, per: Operation['bucketPer']) =>
  `Rate limit: the ${per === 'client IP' ? 'caller IP\'s' : 'operator\'s'} \`${bucket.name}\` bucket, burst ${bucket.burst}, ${bucket.perSecond} per second (contract 8.1); over it, 429 with Retry-After.`;

const IDEMPOTENCY_TEXT =
  `Idempotent by requestUuid: a retry with the same requestUuid and the same body within ${IDEMPOTENCY_RETENTION_MS / 3_600_000} hours ` +
  `gets the stored answer and status with the header ${REPLAY_HEADER}: true; the same requestUuid with another body is 409 ` +
  'idempotency_key_reused (contract 4.3, D17). A retry is signed afresh: the same signed request twice is 401 replayed_signature.';

const OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/v1/session',
    operationId: 'createSession',
    tag: 'sessions',
    summary: 'Launch a session for one player, one game, one currency',
    description:
      'Calls the operator wallet\'s /wallet/balance first for a real-money session (D7); a demo session never calls the wallet (D8). ' +
      'With the bot challenge enabled, the token goes in botChallengeToken or the header bot-challenge-response (contract 5.7).',
    signed: true,
    bucket: BUCKETS.session,
    idempotent: true,
    body: { schema: sessionCreateSchema, required: true },
    ok: { status: 200, description: 'the session (contract 2.3)', schema: launchResponseSchema },
    errors: ['bot_challenge_verification_failed', 'operator_mismatch', 'game_not_available', 'session_rejected', 'wallet_unavailable', 'wallet_rejected'],
  },
  {
    method: 'post',
    path: '/v1/session/{sessionId}/terminate',
    operationId: 'terminateSession',
    tag: 'sessions',
    summary: 'End a session',
    description:
      'Ends the session, voids its round in BETTING_OPEN or ROLLING and rolls its bet back, and retires its server seed (contract 3.3, 8.6, D7). ' +
      'The body may be empty.',
    signed: true,
    bucket: BUCKETS.terminate,
    idempotent: true,
    pathParameters: { sessionId: 'the sessionId of the launch' },
    body: { schema: sessionTerminateSchema, required: false },
    ok: { status: 200, description: 'the session has ended', schema: terminateResponseSchema },
    errors: ['not_found', 'session_not_active'],
  },
  {
    method: 'get',
    path: '/v1/games',
    operationId: 'listGames',
    tag: 'games',
    summary: 'The games the operator may launch',
    description:
      'The catalogue (D39): every game a session of the calling operator may launch, with its versions, its return to player and largest ' +
      'multiplier, and the operator\'s configuration of it per currency. Dice is available to every operator; any other game once the ' +
      'operator has a configuration for it in a currency (`rgs game config`). Amounts are micro-units: 1.00 = 100000.',
    signed: true,
    bucket: BUCKETS.read,
    ok: { status: 200, description: 'the catalogue', schema: catalogueSchema },
    errors: [],
  },
  {
    method: 'post',
    path: '/v1/freebets',
    operationId: 'createFreeBetCampaign',
    tag: 'freebets',
    summary: 'Grant free rounds to players (a campaign)',
    description:
      'A free-bet campaign (D42): each player named gets `rounds` free rounds of `gameCode` at `stakeMicro` (micro-units: 1.00 = 100000) ' +
      'until `expiresAt`. The stake must be one the game takes from the operator in the currency (GET /v1/games). Idempotent on ' +
      '`campaignRef`: the same terms again answer the same 201 body and make nothing; other terms under the same ref are refused 409 ' +
      '`campaign_conflict`. The body may be up to 2 MiB (10,000 playerRefs). Players cannot play the grants yet: the player side ' +
      'follows in a later release.',
    signed: true,
    bucket: BUCKETS.freebets,
    body: { schema: freeBetCreateSchema, required: true },
    ok: { status: 201, description: 'the campaign, made now or by an earlier call with the same terms', schema: createdCampaignSchema },
    errors: ['campaign_conflict', 'game_not_available', 'bet_out_of_range', 'feature_buy_not_available'],
  },
  {
    method: 'get',
    path: '/v1/freebets',
    operationId: 'listFreeBetGrants',
    tag: 'freebets',
    summary: 'List free-bet grants',
    description: "The calling operator's grants, one per player and campaign, with what each has played and has left, oldest first, a page at a time (D10, D42).",
    signed: true,
    bucket: BUCKETS.read,
    query: grantsQuerySchema,
    ok: { status: 200, description: 'a page of grants', schema: grantPageSchema },
    errors: [],
  },
  {
    method: 'get',
    path: '/v1/freebets/{campaignId}',
    operationId: 'freeBetCampaignTotals',
    tag: 'freebets',
    summary: "A free-bet campaign's totals",
    description: "What the campaign granted, what was played and paid, what remains (D42). Another operator's campaign reads as unknown (D10).",
    signed: true,
    bucket: BUCKETS.read,
    pathParameters: { campaignId: 'the campaignId the create answered' },
    ok: { status: 200, description: 'the totals', schema: campaignTotalsSchema },
    errors: ['campaign_not_found'],
  },
  {
    method: 'delete',
    path: '/v1/freebets/{campaignId}',
    operationId: 'cancelFreeBetCampaign',
    tag: 'freebets',
    summary: 'Cancel a free-bet campaign',
    description:
      'Cancels every round not played yet; rounds played stand (D42). Answers the totals; a second call changes nothing and answers them again, ' +
      'as does a call for a campaign finished or past its expiresAt. The first cancellation sends the webhook event freebet.campaign_finished ' +
      '(reason cancelled) once no free bet of the campaign is undecided (D31).',
    signed: true,
    bucket: BUCKETS.freebets,
    pathParameters: { campaignId: 'the campaignId the create answered' },
    ok: { status: 200, description: 'the totals after the cancellation', schema: campaignTotalsSchema },
    errors: ['campaign_not_found'],
  },
  {
    method: 'get',
    path: '/v1/rounds',
    operationId: 'listRounds',
    tag: 'rounds',
    summary: 'List finished rounds for reconciliation',
    description:
      'Settled and voided rounds of the calling operator (demo rounds excluded, D8), ordered by when they finished, a page at a time (D10).',
    signed: true,
    bucket: BUCKETS.read,
    query: listQuerySchema,
    ok: { status: 200, description: 'a page of rounds', schema: roundListSchema },
    errors: ['operator_mismatch'],
  },
  {
    method: 'get',
    path: '/v1/rounds/{roundId}',
    operationId: 'getRound',
    tag: 'rounds',
    summary: 'A round with its bet and wallet calls',
    description:
      'Any round of the calling operator, finished or not, demo included (flagged). A roundId sent to the wallet with a bet that was ' +
      'refused reads as a round VOIDED with voidReason "bet_rejected" (D22).',
    signed: true,
    bucket: BUCKETS.read,
    pathParameters: { roundId: 'the roundId sent to the wallet with the bet' },
    query: roundQuerySchema,
    ok: { status: 200, description: 'the round', schema: roundDetailSchema },
    errors: ['operator_mismatch', 'not_found'],
  },
  {
    method: 'get',
    path: '/v1/rounds/{roundId}/proof',
    operationId: 'getRoundProof',
    tag: 'rounds',
    summary: 'The fairness proof of a round',
    description:
      'Only for a round that is settled (or voided with an outcome) and whose server seed is retired: the session ended or the seed was ' +
      'rotated (contract 2.11, D2). Verify: SHA256(serverSeed) = serverSeedHash, and HMAC-SHA256(serverSeed, clientSeed + ":" + nonce) ' +
      'reproduces the outcome: the die (D2), or the crash point, from which the bet\'s cash-out and payout follow again (D40).',
    signed: true,
    bucket: BUCKETS.read,
    pathParameters: { roundId: 'the roundId sent to the wallet with the bet' },
    ok: { status: 200, description: 'the proof (contract 2.11, D19)', schema: roundProofSchema },
    errors: ['round_not_found', 'round_not_settled', 'seed_not_revealed'],
  },
  {
    method: 'get',
    path: '/v1/rounds/{roundId}/replay-url',
    operationId: 'getRoundReplayUrl',
    tag: 'rounds',
    summary: 'A link to the page that shows a finished round as the player lived it',
    description:
      'Game recall (D33): a link, valid 24 hours, to an HTML page of the service (PUBLIC_URL/replay/{roundId}?t=...) showing the ' +
      'game, the time (UTC), the playerRef, the stake and side, the balance before and after as the wallet answered them, the outcome, ' +
      'the payout, the state (settled, or voided with its reason) and the proof, checked in the page. Amounts are in major units of the ' +
      'round\'s currency (D38). The page answers under the launch page\'s frame-ancestors (D16). A round still in play is refused ' +
      '409 round_not_settled, as its dispute pack is (D32); a roundId sent to the wallet with a bet it refused reads as a voided round (D22).',
    signed: true,
    bucket: BUCKETS.read,
    pathParameters: { roundId: 'the roundId sent to the wallet with the bet' },
    ok: { status: 200, description: 'the link and when it expires', schema: replayUrlSchema },
    errors: ['round_not_found', { code: 'round_not_settled', status: 409 }],
  },
  {
    method: 'get',
    path: '/v1/rounds/{roundId}/dispute-pack',
    operationId: 'getDisputePack',
    tag: 'rounds',
    summary: 'The signed dispute pack of a finished round',
    description:
      'A ZIP of the round\'s evidence for a regulator or a player: the round as GET /v1/rounds/{roundId} answers it, its bet, every wallet ' +
      'call with the bodies sent and received, the proof (once the seed is revealed), the par sheet of its configuration, and a manifest ' +
      'of their SHA-256 hashes signed with the service\'s Ed25519 key (GET /v1/keys). For a round that is settled or voided, including ' +
      'the roundId of a bet the wallet refused (D22); 409 round_not_settled while the round is played (D32). `rgs verify-pack` checks a pack.',
    signed: true,
    bucket: BUCKETS.read,
    pathParameters: { roundId: 'the roundId sent to the wallet with the bet' },
    ok: { status: 200, description: 'the pack (D32)', contentType: 'application/zip', schema: disputePackSchema },
    errors: ['round_not_found', { code: 'round_not_settled', status: 409 }],
  },
  {
    method: 'get',
    path: '/v1/reports/ggr',
    operationId: 'ggrReport',
    tag: 'reports',
    summary: 'Gross gaming revenue per game and currency',
    description:
      'Over the settled and voided non-demo rounds that finished in [from, to) (D10). A voided round\'s stake was refunded, so it counts ' +
      'in rounds and voidedRounds only; a free bet\'s stake counts 0 (contract 8.4).',
    signed: true,
    bucket: BUCKETS.read,
    query: reportQuerySchema,
    ok: { status: 200, description: 'the report', schema: ggrSchema },
    errors: ['operator_mismatch'],
  },
  {
    method: 'get',
    path: '/v1/reports/wallet-calls',
    operationId: 'walletCallsReport',
    tag: 'reports',
    summary: 'The service\'s calls to the operator wallet, per endpoint',
    description: 'The calls whose audit row was written in [from, to), with the circuit of each endpoint as it stands now (D10, contract 3.4).',
    signed: true,
    bucket: BUCKETS.read,
    query: reportQuerySchema,
    ok: { status: 200, description: 'the report', schema: walletCallsSchema },
    errors: ['operator_mismatch'],
  },
  {
    method: 'post',
    path: '/v1/webhooks/test',
    operationId: 'sendTestWebhook',
    tag: 'webhooks',
    summary: 'Send a webhook.test event to the operator\'s endpoint',
    description:
      'Records a webhook.test event and answers its eventId at once; the event is then delivered like any other (see `webhooks`), ' +
      'whatever event types the endpoint takes (D31). The body may be empty.',
    signed: true,
    bucket: BUCKETS.webhooks,
    idempotent: true,
    body: { schema: webhookPostSchema, required: false },
    ok: { status: 202, description: 'the event is recorded; its delivery follows', schema: eventIdSchema },
    errors: ['webhook_not_configured'],
  },
  {
    method: 'get',
    path: '/v1/webhooks/deliveries',
    operationId: 'listWebhookDeliveries',
    tag: 'webhooks',
    summary: 'The webhook deliveries, newest event first',
    description: 'Every event recorded for the calling operator with the state of its delivery, a page at a time (D31, D38).',
    signed: true,
    bucket: BUCKETS.read,
    query: deliveriesQuerySchema,
    ok: { status: 200, description: 'a page of deliveries', schema: deliveryPageSchema },
    errors: [],
  },
  {
    method: 'post',
    path: '/v1/webhooks/deliveries/{eventId}/redeliver',
    operationId: 'redeliverWebhook',
    tag: 'webhooks',
    summary: 'Deliver an event again',
    description:
      'A new attempt of the same event (same eventId, same body), due at once, whatever its state: pending, delivered or failed. ' +
      'A failed one gets a new attempt and, when that is not acknowledged, stays failed (the 72 hours after the event are spent). ' +
      'The body may be empty.',
    signed: true,
    bucket: BUCKETS.webhooks,
    idempotent: true,
    pathParameters: { eventId: 'the eventId of the delivery' },
    body: { schema: webhookPostSchema, required: false },
    ok: { status: 202, description: 'the attempt is queued', schema: eventIdSchema },
    errors: ['not_found', 'webhook_not_configured'],
  },
  {
    method: 'get',
    path: OPENAPI_PATH,
    operationId: 'openApiDocument',
    tag: 'documentation',
    summary: 'This document',
    signed: false,
    security: [],
    ok: { status: 200, description: 'the OpenAPI document of this API, unsigned', schema: { type: 'object' } },
    errors: [],
  },
  {
    method: 'get',
    path: KEYS_PATH,
    operationId: 'signingKeys',
    tag: 'documentation',
    summary: 'The service\'s public signing keys (JWKS)',
    description:
      'The Ed25519 keys that sign dispute packs, current, retired and revoked, as a JSON Web Key Set (RFC 7517, 8037); unsigned, so that ' +
      'anyone holding a pack can check it (D32). Each key carries createdAt, retiredAt and revokedAt: a pack is valid under a key only if ' +
      'it was made while the key was current, and never under a revoked key. Save it to verify packs offline: ' +
      '`rgs verify-pack FILE --keys keys.json`.',
    signed: false,
    security: [],
    bucket: BUCKETS.keys,
    bucketPer: 'client IP',
    ok: { status: 200, description: 'the keys', schema: jwksSchema },
    errors: [],
  },
  {
    method: 'get',
    path: TOKEN_KEYS_PATH,
    operationId: 'sessionTokenKeys',
    tag: 'documentation',
    summary: 'The public keys of session tokens (JWKS)',
    description:
      'With SESSION_TOKEN_ALG=RS256 or EdDSA, session tokens are signed with the service\'s own key and name its kid in their header (D34). ' +
      'These are its public keys, current and recently retired (never revoked ones), as a JSON Web Key Set (RFC 7517); unsigned, so that a game client or an ' +
      'operator can verify a token. Rate limited per client IP, in the bucket of GET /v1/keys.',
    signed: false,
    security: [],
    bucket: BUCKETS.keys,
    bucketPer: 'client IP',
    ok: { status: 200, description: 'the keys', schema: tokenJwksSchema },
    errors: [],
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    tag: 'health',
    summary: 'Liveness',
    signed: false,
    security: [],
    ok: { status: 200, description: 'the process runs (D15)', schema: liveSchema },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    tag: 'health',
    summary: 'Readiness',
    signed: false,
    security: [],
    ok: { status: 200, description: 'Postgres and Redis answer (D15)', schema: readySchema },
    responses: { '503': { description: 'Postgres or Redis does not answer; `checks` says which (D15)', content: { 'application/json': { schema: readySchema } } } },
    errors: [],
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'health',
    summary: 'Prometheus metrics',
    description:
      'Prometheus text format (D15). In production the public port serves it only to `Authorization: Bearer $METRICS_TOKEN`, and not at ' +
      'all without METRICS_TOKEN (404 like an unknown path); HEALTH_PORT serves it openly (D25).',
    signed: false,
    security: [{}, { MetricsToken: [] }],
    ok: { status: 200, description: 'the metrics', contentType: 'text/plain', schema: { type: 'string' } },
    errors: ['not_found'],
  },
];

// which error codes each route answers (docs/errors.md lists them per code)
export function routeErrorCodes(): { route: string; signed: boolean; codes: ErrorCode[] }[] {
  return OPERATIONS.map((op) => ({
    route: `${op.method.toUpperCase()} ${op.path}`,
    signed: op.signed,
    codes: [...new Set([...stageCodes(op), ...op.errors.map(codeOf)])],
  }));
}

function operationObject(op: Operation): Json {
  const parameters: Json[] = [
    ...Object.entries(op.pathParameters ?? {}).map(([name, description]) => ({
      name,
      in: 'path',
      required: true,
      description,
      schema: { type: uuidPathParameter.type, pattern: uuidPathParameter.pattern },
    })),
    ...(op.query ? queryParameters(op.query) : []),
  ];
  const notes = [op.description, op.bucket && rateText(op.bucket, op.bucketPer), op.idempotent && IDEMPOTENCY_TEXT].filter(Boolean);
  const responses: Json = { ...errorResponses([...stageCodes(op), ...op.errors]), ...op.responses };
  if (op.ok) {
    responses[String(op.ok.status)] = {
      description: op.ok.description,
      ...(op.idempotent ? { headers: { [REPLAY_HEADER]: { description: '"true" on the stored answer to a retry (D17)', schema: { const: 'true' } } } } : {}),
      content: { [op.ok.contentType ?? 'application/json']: { schema: op.ok.schema } },
    };
  }
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(notes.length > 0 ? { description: notes.join('\n\n') } : {}),
    ...(op.security ? { security: op.security } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required,
            description: `JSON, at most ${MAX_BODY_BYTES / 1024} KiB (D9); unknown fields are ignored (D9). The signature covers the exact bytes sent.`,
            content: { 'application/json': { schema: toJsonSchema(op.body.schema) } },
          },
        }
      : {}),
    responses: sortKeys(responses),
  };
}

const sortKeys = (record: Json): Json => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

// --- the wallet callbacks (the operator's side) ---------------------------------------

const WALLET_RULES: Record<WalletEndpoint, { summary: string; rules: string }> = {
  balance: {
    summary: 'Read the player\'s balance',
    rules: 'No ledger effect. Called at session launch (D7) and on reconnects (D24). RS_ERROR_USER_DISABLED refuses the launch (422, D7).',
  },
  bet: {
    summary: 'Debit a stake',
    rules:
      'A first-time transactionUuid debits and answers RS_OK with the new balance; a clean refusal answers RS_ERROR_NOT_ENOUGH_MONEY ' +
      '(with the current balance) and does not debit. A transactionUuid already rolled back (even one never seen before the rollback) ' +
      'moves no money and answers RS_ERROR_TRANSACTION_DOES_NOT_EXIST (contract 4.2, D27).',
  },
  win: {
    summary: 'Credit a payout',
    rules:
      'Once per winning bet; referenceTransactionUuid is the bet\'s transactionUuid. Unknown bet: answer RS_ERROR_TRANSACTION_DOES_NOT_EXIST ' +
      '(the service alerts and takes the bet as settled without payout). The amount is the net payout (contract 4.2, 8.4).',
  },
  rollback: {
    summary: 'Reverse a bet',
    rules:
      'Look up referenceTransactionUuid: a booked bet is credited back; an already rolled-back one answers RS_OK with the current balance; ' +
      'an unknown one answers RS_ERROR_TRANSACTION_DOES_NOT_EXIST and is remembered, so that a late debit with it moves no money ' +
      '(contract 4.2, D27). Retried for up to 24 hours.',
  },
};

const WALLET_IDEMPOTENCY =
  'Dedupe on requestUuid first (a known one: answer the stored response unchanged), then on transactionUuid (already booked: do not ' +
  'book again; answer RS_OK with the current balance, or RS_ERROR_DUPLICATE_TRANSACTION); keep responses at least 24 hours (contract 4.3).';

const schemaName = (endpoint: WalletEndpoint) => `Wallet${endpoint[0]!.toUpperCase()}${endpoint.slice(1)}Request`;

function walletStatusTable(endpoint: WalletEndpoint): string {
  const rows = RS_STATUSES.map((status) => {
    const statusClass = classifyStatus(status, endpoint);
    return `| ${status} | ${statusClass} | ${STATUS_CLASSES[statusClass]} |`;
  });
  return ['| status | class | what the service does |', '|---|---|---|', ...rows].join('\n');
}

function walletWebhook(endpoint: WalletEndpoint): Json {
  const { summary, rules } = WALLET_RULES[endpoint];
  return {
    post: {
      operationId: `wallet${endpoint[0]!.toUpperCase()}${endpoint.slice(1)}`,
      tags: ['wallet'],
      summary: `POST {wallet_base_url}/wallet/${endpoint}: ${summary}`,
      description: [
        `Implemented by the operator at \`/wallet/${endpoint}\` under its wallet base URL; signed with the wallet credential, over the exact ` +
          `path the wallet receives, prefix included (contract 4.2, 5.1).`,
        rules,
        WALLET_IDEMPOTENCY,
      ].join('\n\n'),
      security: WALLET_SIGNED,
      requestBody: {
        required: true,
        description: 'JSON, exactly these fields (contract 2.5-2.9); the signature covers the exact bytes.',
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName(endpoint)}` } } },
      },
      responses: {
        '200': {
          description:
            `Any 2xx with this JSON body is taken at its word, and so is a 4xx whose status is a refusal (not RS_OK or ` +
            `RS_ERROR_DUPLICATE_TRANSACTION), such as 401 with RS_ERROR_INVALID_SIGNATURE (D13). What the service does on each status for /wallet/${endpoint} ` +
            `(contract 7.1):\n\n${walletStatusTable(endpoint)}`,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/WalletResponse' } } },
        },
        default: {
          description:
            'Any other answer (a 5xx or any status but a 2xx or 4xx, a 4xx claiming success, a body that is not a JSON object, a missing or ' +
            'unknown status, a requestUuid that does not ' +
            `echo the request, more than ${WALLET_ANSWER_MAX_BYTES / 1024} KiB) or none within the timeout is uncertain: RS_ERROR_UNKNOWN ` +
            '(or RS_ERROR_TIMEOUT), as in the table above (contract 7.1, D13, D24).',
        },
      },
    },
  };
}

const WALLET_ENDPOINTS: WalletEndpoint[] = ['balance', 'bet', 'win', 'rollback'];

// --- the webhook events (the operator's side, D31) ------------------------------------

const duration = (ms: number) => (ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`);

const EVENT_DELIVERY =
  `POSTed to the operator's webhook URL (\`rgs webhook set\`), signed with the operator's current wallet credential exactly like a ` +
  'wallet call (security scheme WalletKeyId + WalletTimestamp + WalletSignature over the URL\'s path, contract 5.1, D6): verify it the ' +
  `same way. A 2xx within ${DELIVERY_TIMEOUT_MS / 1000} s acknowledges; the answer's body is ignored. Otherwise the same body is sent ` +
  `again after about ${RETRY_DELAYS_MS.map(duration).join(', ')}, then every 24 h, jittered, until ${DELIVERY_WINDOW_MS / 3_600_000} h ` +
  'after the event; the delivery is then failed (GET /v1/webhooks/deliveries). Delivery is at least once, in no particular order: ' +
  'dedupe on eventId.';

function eventWebhook(type: EventType): Json {
  return {
    post: {
      operationId: `event${eventDataSchemaName(type).slice('Event.'.length)}`,
      tags: ['webhooks'],
      summary: `POST {webhook_url}: ${type}`,
      description: EVENT_DELIVERY,
      security: WALLET_SIGNED,
      requestBody: {
        required: true,
        description: 'The contract 6.1 envelope; the signature covers the exact bytes.',
        content: { 'application/json': { schema: envelopeSchema(type) } },
      },
      responses: {
        '2XX': { description: 'acknowledged: no further attempt' },
        default: { description: `not acknowledged (any other status, or no answer within ${DELIVERY_TIMEOUT_MS / 1000} s): attempted again` },
      },
    },
  };
}

// --- the document -------------------------------------------------------------------------

export function buildOpenApi(): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) paths[op.path] = { ...paths[op.path], [op.method]: operationObject(op) };
  const errorSchemas = Object.fromEntries((Object.keys(ERRORS) as ErrorCode[]).map((code) => [errorSchemaName(code), errorSchema(code)]));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Remote gaming server: operator API',
      version: API_VERSION,
      description: [
        'The API an operator backend calls (sessions, round proofs, reconciliation reads, webhook deliveries), and under `webhooks` ' +
          'what the service calls on the operator\'s side: the four wallet endpoints, called whenever money moves, and the webhook ' +
          'events (D31), POSTed to the operator\'s webhook URL.',
        'Every /v1 request except this document and the public keys (/v1/keys) is signed (security scheme RgsKeyId + RgsTimestamp + RgsSignature, contract 5.1-5.4). ' +
          'Money is a decimal string of integer micro-units, 100000 to the major unit (contract 1, D18). Every non-2xx JSON body has ' +
          '`error` (a stable code) and `message` (D3); the codes are in components.schemas `Error.*` and docs/errors.md. Every response ' +
          `carries Strict-Transport-Security: ${HSTS} (contract 5.5).`,
      ].join('\n\n'),
    },
    tags: [
      { name: 'sessions', description: 'Launch and end player sessions' },
      { name: 'games', description: 'The games the operator may launch, and their terms (D39)' },
      { name: 'freebets', description: 'Free-bet campaigns and their grants (D42)' },
      { name: 'rounds', description: 'Rounds, their proofs (provable fairness) and dispute packs' },
      { name: 'reports', description: 'Reconciliation reports (D10)' },
      { name: 'webhooks', description: 'Events sent to the operator\'s webhook endpoint, and their deliveries (D31)' },
      { name: 'health', description: 'Liveness, readiness and metrics; unsigned (D15)' },
      { name: 'documentation', description: 'This document and the service\'s public keys; unsigned' },
      { name: 'wallet', description: 'The operator\'s wallet: called by the service, implemented by the operator (contract 4.2)' },
    ],
    security: SIGNED,
    paths,
    webhooks: {
      ...Object.fromEntries(WALLET_ENDPOINTS.map((endpoint) => [`wallet.${endpoint}`, walletWebhook(endpoint)])),
      ...Object.fromEntries(EVENT_TYPES.map((type) => [`event.${type}`, eventWebhook(type)])),
    },
    components: {
      securitySchemes: {
        ...signingSchemes('Rgs', 'operator\'s API credential (apiKeyId)'),
        ...signingSchemes('Wallet', 'operator\'s wallet credential (walletSignatureSecret)'),
        MetricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, for /metrics on the public port in production (D25)' },
      },
      schemas: {
        ...errorSchemas,
        ...Object.fromEntries(WALLET_ENDPOINTS.map((endpoint) => [schemaName(endpoint), WALLET_REQUEST_SCHEMAS[endpoint]])),
        WalletResponse: walletResponseSchema,
        ...Object.fromEntries(EVENT_TYPES.map((type) => [eventDataSchemaName(type), EVENT_DATA_SCHEMAS[type]])),
      },
    },
  };
}
