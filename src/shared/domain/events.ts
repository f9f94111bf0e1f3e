// The events an operator's webhook endpoint receives (contract 6, D31): their types, the
// envelope every delivery carries and the data of each type. Amounts are MicroAmount strings
// (D18) and times ISO 8601, as everywhere on the wire.

export const EVENT_TYPES = [
  'round.settled',
  'round.voided',
  'session.terminated',
  'session.rg_limit_tripped',
  'reconciliation.discrepancy',
  'credential.rotated',
  'credential.revoked',
  'freebet.campaign_finished',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);

// contract 6.1: a receiver reads `dataVersion` before `data`; a change of any data shape
// raises it
export const EVENT_DATA_VERSION = 1;

// contract 6.2: the fields GET /v1/rounds gives of the round
export type RoundSettledData = {
  roundId: string;
  sessionId: string;
  gameCode: string;
  currency: string;
  totalBetsMicro: string;
  totalPayoutsMicro: string;
  settledAt: string;
  rngVersion: string;
  outcomeSide: string | null;
  outcomeSum: number | null;
  // D40: a crash round's crash point and the multiplier it was cashed out at (null: lost)
  crashMultiplier?: string;
  cashOutMultiplier?: string | null;
};

export type RoundVoidedData = {
  roundId: string;
  sessionId: string;
  gameCode: string;
  currency: string;
  totalBetsMicro: string;
  reason: string;
  voidedAt: string;
};

export type SessionTerminatedData = { sessionId: string; playerRef: string; reason: string; terminatedAt: string };

// which limit of the session (contract 8.3) refused a bet; limitMicro for the money limits,
// limitSeconds for the session time
export type RgLimit = 'dailyLoss' | 'dailyWager' | 'sessionTime';
export type RgLimitTrippedData = {
  sessionId: string;
  playerRef: string;
  limit: RgLimit;
  limitMicro?: string;
  limitSeconds?: number;
  trippedAt: string;
};

// a win the wallet never confirmed (abandoned after its retries, or unknown to the wallet,
// D23) or a rollback abandoned after its retries (contract 3.4)
export type DiscrepancyKind = 'win_abandoned' | 'win_not_found' | 'rollback_abandoned';
export type ReconciliationDiscrepancyData = {
  kind: DiscrepancyKind;
  roundId: string;
  transactionUuid: string;
  endpoint: 'win' | 'rollback';
  amountMicro: string;
  detectedAt: string;
};

export type CredentialRotatedData = { kind: 'api' | 'wallet'; kid: string; previousKid: string | null; previousNotAfter: string | null };
export type CredentialRevokedData = { kid: string };

// D42: a free-bet campaign whose totals are final: every round played, the campaign
// cancelled, or past its end, and no bet of it undecided. Its totals are those GET
// /v1/freebets/{campaignId} gives (remaining is 0 unless it expired).
export type FreeBetFinishReason = 'played' | 'expired' | 'cancelled';
export type FreeBetCampaignFinishedData = {
  campaignId: string;
  campaignRef: string;
  gameCode: string;
  currency: string;
  stakeMicro: string;
  reason: FreeBetFinishReason;
  grants: number;
  granted: number;
  played: number;
  remaining: number;
  cancelled: number;
  totalPaidMicro: string;
  finishedAt: string;
};

export type EventData = {
  'round.settled': RoundSettledData;
  'round.voided': RoundVoidedData;
  'session.terminated': SessionTerminatedData;
  'session.rg_limit_tripped': RgLimitTrippedData;
  'reconciliation.discrepancy': ReconciliationDiscrepancyData;
  'credential.rotated': CredentialRotatedData;
  'credential.revoked': CredentialRevokedData;
  'freebet.campaign_finished': FreeBetCampaignFinishedData;
  'webhook.test': Record<string, never>;
};

// contract 6.1
export type WebhookEnvelope = {
  eventId: string;
  eventType: EventType;
  occurredAt: string;
  operatorId: string;
  dataVersion: number;
  data: unknown;
};

// The bytes of an event's delivery. Every attempt of one event sends the same bytes: the
// envelope is built from the stored event, in this fixed field order, and the stored data
// keeps one key order (Postgres jsonb normalises it).
export function webhookBody(event: { id: string; eventType: string; occurredAt: Date; operatorId: string; data: unknown }): string {
  const envelope: WebhookEnvelope = {
    eventId: event.id,
    eventType: event.eventType as EventType,
    occurredAt: event.occurredAt.toISOString(),
    operatorId: event.operatorId,
    dataVersion: EVENT_DATA_VERSION,
    data: event.data,
  };
  return JSON.stringify(envelope);
}
