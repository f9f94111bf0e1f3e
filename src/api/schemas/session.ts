import type { JSONSchemaType } from 'ajv';
import { STORABLE_TEXT, playerRefSchema } from '../../shared/platform/validation.js';
import type { LaunchRequest, LaunchResponse } from '../../shared/game/sessions/launch.js';
import type { TerminateResponse } from '../../shared/game/sessions/terminate.js';
import { CLIENT_SEED_PATTERN, SERVER_SEED_PATTERN } from '../../shared/domain/seeds.js';
import { instant, objectSchema, sha256Hex, uuid } from './common.js';

// contract 2.2 with the bounds of DECISIONS D9; the responses of 2.3 and D7.

const NON_NEGATIVE_MICRO = '^[0-9]{1,20}$';
// Free text fields carry STORABLE_TEXT; fields with an ASCII pattern or a format need no more.
// ajv's JSONSchemaType needs `nullable: true` on every optional property, which would let a
// JSON null through; null is no 2.2 field's value, so it is a wrong type (D3), not "absent"
const NOT_NULL = { not: { type: 'null' } } as const;
// D18: the limits are stored as BIGINT, so they must also fit in 64 bits
const LIMIT_TEXT = 'decimal micro-units, at most 2^63-1 (the custom format int64-string, D18)';

export type SessionCreateBody = LaunchRequest & { requestUuid?: string; botChallengeToken?: string };

export const sessionCreateSchema: JSONSchemaType<SessionCreateBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['operatorId', 'playerRef', 'gameCode', 'currency', 'lang', 'jurisdiction'],
  properties: {
    operatorId: { type: 'string', minLength: 1, maxLength: 64, pattern: STORABLE_TEXT, description: 'the operator that owns the signing key (contract 4.1 rule 3)' },
    playerRef: playerRefSchema,
    gameCode: { type: 'string', minLength: 1, maxLength: 64, pattern: STORABLE_TEXT },
    currency: { type: 'string', minLength: 3, maxLength: 10, pattern: '^[A-Z0-9]+$' },
    lang: { type: 'string', minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$' },
    jurisdiction: { type: 'string', minLength: 1, maxLength: 16, pattern: '^[A-Za-z0-9-]+$' },
    mode: { type: 'string', enum: ['real', 'demo'], nullable: true, description: 'default real; a demo session never calls the wallet (D8)' },
    returnUrl: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048, nullable: true, ...NOT_NULL },
    clientSeed: { type: 'string', pattern: CLIENT_SEED_PATTERN, nullable: true, ...NOT_NULL, description: '1 to 64 printable ASCII characters, no ":"; generated when absent (D2)' },
    rgLimits: {
      type: 'object',
      additionalProperties: false,
      nullable: true,
      ...NOT_NULL,
      required: [],
      properties: {
        dailyLossMicro: { type: 'string', pattern: NON_NEGATIVE_MICRO, format: 'int64-string', nullable: true, ...NOT_NULL, description: LIMIT_TEXT },
        dailyWagerMicro: { type: 'string', pattern: NON_NEGATIVE_MICRO, format: 'int64-string', nullable: true, ...NOT_NULL, description: LIMIT_TEXT },
        sessionTimeSeconds: { type: 'integer', minimum: 60, maximum: 3600, nullable: true, ...NOT_NULL },
      },
    },
    sandboxSeeds: {
      type: 'object',
      additionalProperties: false,
      nullable: true,
      ...NOT_NULL,
      required: ['serverSeed', 'clientSeed'],
      description:
        'sandbox operators only (else 422 sandbox_only): the session\'s seeds, so that its outcomes are reproducible from nonce 0; the serverSeed is sealed and committed to (serverSeedHash) like a generated one, and clientSeed replaces the top-level one (D35)',
      properties: {
        serverSeed: { type: 'string', pattern: SERVER_SEED_PATTERN, description: '64 lower-case hex characters (D2)' },
        clientSeed: { type: 'string', pattern: CLIENT_SEED_PATTERN, description: '1 to 64 printable ASCII characters, no ":" (D2)' },
      },
    },
    requestUuid: { type: 'string', format: 'uuid', nullable: true, ...NOT_NULL, description: 'idempotency key: a retry with it gets the same session (D17)' },
    botChallengeToken: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      pattern: STORABLE_TEXT,
      nullable: true,
      ...NOT_NULL,
      description: 'the bot challenge token, when the challenge is enabled (or the header bot-challenge-response, contract 5.7)',
    },
  },
};

export type SessionTerminateBody = { reason?: string; requestUuid?: string };

export const sessionTerminateSchema: JSONSchemaType<SessionTerminateBody> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    reason: { type: 'string', minLength: 1, maxLength: 256, pattern: STORABLE_TEXT, nullable: true, ...NOT_NULL, description: 'why, kept with the session' },
    requestUuid: { type: 'string', format: 'uuid', nullable: true, ...NOT_NULL },
  },
};

// contract 2.3
export const launchResponseSchema = objectSchema<LaunchResponse>({
  sessionId: uuid,
  sessionToken: { type: 'string', description: 'HS256 JWT (contract 5.6); held in memory by the player client only' },
  launchUrl: { type: 'string', format: 'uri', description: '{PUBLIC_URL}/play/{gameCode}?token=<sessionToken> (D7)' },
  expiresAt: { ...instant, description: 'creation + 60 minutes (contract 2.3, D7)' },
  serverSeedHash: { ...sha256Hex, description: 'SHA-256 hex of the server seed: the commitment (contract 2.3, D2)' },
  sandbox: { type: 'boolean', description: 'a sandbox session: its operator is a sandbox operator (D35)' },
});

// D7
export const terminateResponseSchema = objectSchema<TerminateResponse>({
  sessionId: uuid,
  terminatedAt: instant,
  voidedRoundIds: { type: 'array', items: uuid, description: 'the session\'s rounds voided by the termination (contract 8.6)' },
});
