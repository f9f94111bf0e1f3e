import {
  EVENT_DATA_VERSION,
  type CredentialRevokedData,
  type CredentialRotatedData,
  type EventType,
  type FreeBetCampaignFinishedData,
  type ReconciliationDiscrepancyData,
  type RgLimitTrippedData,
  type RoundSettledData,
  type RoundVoidedData,
  type SessionTerminatedData,
  type WebhookEnvelope,
} from '../../shared/domain/events.js';
import { instant, microAmount, objectSchema, orNull, uuid, type Schema } from './common.js';

// The webhook events' bodies (contract 6, D31), for the OpenAPI document's `webhooks`: the
// envelope and the data of each type, checked against the TypeScript shapes of
// src/shared/domain/events.ts field for field.

const roundSettled = objectSchema<RoundSettledData>({
  roundId: uuid,
  sessionId: uuid,
  gameCode: { type: 'string' },
  currency: { type: 'string' },
  totalBetsMicro: microAmount,
  totalPayoutsMicro: microAmount,
  settledAt: instant,
  rngVersion: { type: 'string' },
  outcomeSide: { enum: ['LOW', 'HIGH', null], description: 'dice; null for crash' },
  outcomeSum: orNull({ type: 'integer', description: 'dice; null for crash' }),
  crashMultiplier: { type: 'string', pattern: '^[0-9]+\\.[0-9]{2}$', description: 'crash only: the round\'s crash point ("2.37", D40)' },
  cashOutMultiplier: orNull({ type: 'string', pattern: '^[0-9]+\\.[0-9]{2}$', description: 'crash only: the multiplier the bet was cashed out at; null when lost (D40)' }),
}, {}, ['crashMultiplier', 'cashOutMultiplier']);

const roundVoided = objectSchema<RoundVoidedData>({
  roundId: uuid,
  sessionId: uuid,
  gameCode: { type: 'string' },
  currency: { type: 'string' },
  totalBetsMicro: { ...microAmount, description: 'the stake refunded' },
  reason: { type: 'string', description: 'why the round was voided (as round_voided on the player channel, contract 6.3)' },
  voidedAt: instant,
});

const sessionTerminated = objectSchema<SessionTerminatedData>({
  sessionId: uuid,
  playerRef: { type: 'string' },
  reason: { type: 'string' },
  terminatedAt: instant,
});

const rgLimitTripped = objectSchema<RgLimitTrippedData>(
  {
    sessionId: uuid,
    playerRef: { type: 'string' },
    limit: { enum: ['dailyLoss', 'dailyWager', 'sessionTime'], description: 'the limit of the session that refused a bet (contract 8.3)' },
    limitMicro: { ...microAmount, description: 'the limit, for dailyLoss and dailyWager' },
    limitSeconds: { type: 'integer', minimum: 0, description: 'the limit, for sessionTime' },
    trippedAt: instant,
  },
  { description: 'sent once per session and limit' },
  ['limitMicro', 'limitSeconds'],
);

const discrepancy = objectSchema<ReconciliationDiscrepancyData>({
  kind: {
    enum: ['win_abandoned', 'win_not_found', 'rollback_abandoned'],
    description: 'a win given up after its retries or unknown to the wallet (D23), or a rollback given up after its retries (contract 3.4)',
  },
  roundId: uuid,
  transactionUuid: { ...uuid, description: 'the transactionUuid of the wallet call' },
  endpoint: { enum: ['win', 'rollback'] },
  amountMicro: microAmount,
  detectedAt: instant,
});

const credentialRotated = objectSchema<CredentialRotatedData>({
  kind: { enum: ['api', 'wallet'] },
  kid: { type: 'string', description: 'the new credential' },
  previousKid: orNull({ type: 'string' }),
  previousNotAfter: orNull({ ...instant, description: 'when the previous credential stops being valid (contract 5.3: 24 hours on)' }),
});

const credentialRevoked = objectSchema<CredentialRevokedData>({ kid: { type: 'string' } });

const count = (description: string): Schema => ({ type: 'integer', minimum: 0, description });

// D42: the totals are those GET /v1/freebets/{campaignId} gives, final
const campaignFinished = objectSchema<FreeBetCampaignFinishedData>(
  {
    campaignId: uuid,
    campaignRef: { type: 'string' },
    gameCode: { type: 'string' },
    currency: { type: 'string' },
    stakeMicro: { ...microAmount, description: 'the stake of each free round' },
    reason: {
      enum: ['played', 'expired', 'cancelled'],
      description: 'played: every round played; expired: past expiresAt with rounds left; cancelled: DELETE /v1/freebets/{campaignId}',
    },
    grants: count('the players granted rounds'),
    granted: count('rounds x grants'),
    played: count('the rounds played, across its grants'),
    remaining: count('the rounds neither played nor cancelled: 0 unless it expired'),
    cancelled: count('the rounds a cancellation took away'),
    totalPaidMicro: { ...microAmount, description: 'what its settled free bets paid (net of their stakes, contract 8.4)' },
    finishedAt: instant,
  },
  { description: 'sent once per campaign, when its totals are final: no bet of it is still undecided (D42)' },
);

export const EVENT_DATA_SCHEMAS: { [T in EventType]: Schema } = {
  'round.settled': { ...roundSettled, description: 'contract 6.2: the fields GET /v1/rounds gives of the round' },
  'round.voided': roundVoided,
  'session.terminated': sessionTerminated,
  'session.rg_limit_tripped': rgLimitTripped,
  'reconciliation.discrepancy': discrepancy,
  'credential.rotated': credentialRotated,
  'credential.revoked': credentialRevoked,
  'freebet.campaign_finished': campaignFinished,
  'webhook.test': { type: 'object', description: 'empty: sent by POST /v1/webhooks/test', maxProperties: 0 },
};

// the envelope of an event of one type (contract 6.1)
export const envelopeSchema = (type: EventType): Schema =>
  objectSchema<WebhookEnvelope>({
    eventId: { ...uuid, description: 'the event\'s id: the same on every attempt; dedupe on it' },
    eventType: { const: type },
    occurredAt: { ...instant, description: 'when the change happened' },
    operatorId: { type: 'string' },
    dataVersion: { const: EVENT_DATA_VERSION, description: 'the version of `data`\'s shape; read it before `data`' },
    data: { $ref: `#/components/schemas/${eventDataSchemaName(type)}` },
  });

export const eventDataSchemaName = (type: EventType) =>
  `Event.${type.replace(/[._]([a-z])/g, (_all, letter: string) => letter.toUpperCase()).replace(/^[a-z]/, (letter) => letter.toUpperCase())}`;
