import type { JSONSchemaType } from 'ajv';
import type { LaunchRequest } from '../../shared/session/launch.js';
import { CLIENT_SEED_PATTERN } from '../../shared/fairness/seeds.js';

// contract 2.2 with the bounds of DECISIONS D9.

const NON_NEGATIVE_MICRO = '^[0-9]{1,20}$';
// D9: playerRef must not look like an e-mail address or a phone number
const EMAIL_LIKE = '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$';
const PHONE_LIKE = '^\\+?[0-9 ()-]{7,}$';

export type SessionCreateBody = LaunchRequest & { requestUuid?: string; botChallengeToken?: string };

export const sessionCreateSchema: JSONSchemaType<SessionCreateBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['operatorId', 'playerRef', 'gameCode', 'currency', 'lang', 'jurisdiction'],
  properties: {
    operatorId: { type: 'string', minLength: 1, maxLength: 64 },
    playerRef: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      allOf: [{ not: { type: 'string', pattern: EMAIL_LIKE } }, { not: { type: 'string', pattern: PHONE_LIKE } }],
    },
    gameCode: { type: 'string', minLength: 1, maxLength: 64 },
    currency: { type: 'string', minLength: 3, maxLength: 10, pattern: '^[A-Z0-9]+$' },
    lang: { type: 'string', minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$' },
    jurisdiction: { type: 'string', minLength: 1, maxLength: 16, pattern: '^[A-Za-z0-9-]+$' },
    mode: { type: 'string', enum: ['real', 'demo'], nullable: true },
    returnUrl: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048, nullable: true },
    clientSeed: { type: 'string', pattern: CLIENT_SEED_PATTERN, nullable: true },
    rgLimits: {
      type: 'object',
      additionalProperties: false,
      nullable: true,
      required: [],
      properties: {
        dailyLossMicro: { type: 'string', pattern: NON_NEGATIVE_MICRO, nullable: true },
        dailyWagerMicro: { type: 'string', pattern: NON_NEGATIVE_MICRO, nullable: true },
        sessionTimeSeconds: { type: 'integer', minimum: 60, maximum: 3600, nullable: true },
      },
    },
    requestUuid: { type: 'string', format: 'uuid', nullable: true },
    botChallengeToken: { type: 'string', minLength: 1, maxLength: 4096, nullable: true },
  },
};

export type SessionTerminateBody = { reason?: string; requestUuid?: string };

export const sessionTerminateSchema: JSONSchemaType<SessionTerminateBody> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    reason: { type: 'string', minLength: 1, maxLength: 256, nullable: true },
    requestUuid: { type: 'string', format: 'uuid', nullable: true },
  },
};
