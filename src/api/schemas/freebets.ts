import type { JSONSchemaType } from 'ajv';
import { STORABLE_TEXT, compile, playerRefSchema, toInvalidRequest } from '../../shared/platform/validation.js';
import {
  CAMPAIGN_STATES,
  GRANT_STATUSES,
  type CampaignTotals,
  type CreatedCampaign,
  type GrantPage,
  type GrantQuery,
  type GrantStatus,
  type GrantView,
} from '../../shared/game/freebets/campaigns.js';
import { CAMPAIGN_REF_PATTERN, MAX_PLAYERS, MAX_ROUNDS, type CampaignTermsInput } from '../../shared/game/freebets/terms.js';
import { STAKE_MICRO_PATTERN } from '../../shared/domain/money.js';
import { instant, listingCursor, objectSchema, orNull, uuid } from './common.js';

// D42: the free-bet routes' requests and answers. D3: anything malformed is 400
// invalid_request; unknown fields and parameters are dropped (D9). The bounds that need the
// game's configuration or the time are checked by the campaign's own rules
// (src/shared/game/freebets/), which `rgs freebets` shares.

const NOT_NULL = { not: { type: 'null' } } as const;
const campaignRef = { type: 'string', pattern: CAMPAIGN_REF_PATTERN, description: "the operator's name for the campaign, 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', ':', '-'; a create is idempotent on it (D42)" } as const;

export const freeBetCreateSchema: JSONSchemaType<CampaignTermsInput> = {
  type: 'object',
  additionalProperties: false,
  required: ['campaignRef', 'gameCode', 'currency', 'stakeMicro', 'rounds', 'playerRefs', 'expiresAt'],
  properties: {
    campaignRef,
    gameCode: { type: 'string', minLength: 1, maxLength: 64, pattern: STORABLE_TEXT, description: 'a game GET /v1/games lists for the currency' },
    currency: { type: 'string', minLength: 3, maxLength: 10, pattern: '^[A-Z0-9]+$' },
    stakeMicro: {
      type: 'string',
      pattern: STAKE_MICRO_PATTERN,
      format: 'int64-string',
      description: "each free round's stake, decimal micro-units (1.00 = 100000), positive, within the game's bounds and on its stake step for the operator and currency (D42, D46)",
    },
    rounds: { type: 'integer', minimum: 1, maximum: MAX_ROUNDS, description: `free rounds per player, 1 to ${MAX_ROUNDS}` },
    playerRefs: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_PLAYERS,
      uniqueItems: true,
      items: playerRefSchema as unknown as JSONSchemaType<string>,
      description: `the players granted the rounds, 1 to ${MAX_PLAYERS}, each once`,
    },
    validFrom: { ...instant, nullable: true, ...NOT_NULL, description: 'when the grants may first be played (default: when the campaign is created)' },
    expiresAt: { ...instant, description: 'when the unplayed rounds expire: after validFrom, at most 90 days from now (D42)' },
    featureBuy: { type: 'boolean', nullable: true, ...NOT_NULL, description: 'the rounds buy the game\'s feature; instant games only (Gem Vault, D41): each free play buys the feature, its debit still the grant\'s stake (D42); true for a shared-clock game is refused 422 feature_buy_not_available' },
  },
};

type GrantsQueryText = { playerRef?: string; campaignRef?: string; status?: GrantStatus; cursor?: string; limit?: string };

export const grantsQuerySchema: JSONSchemaType<GrantsQueryText> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    playerRef: { ...(playerRefSchema as unknown as { type: 'string' }), nullable: true, description: 'only this player\'s grants' },
    campaignRef: { ...campaignRef, nullable: true, description: 'only the grants of this campaign' },
    status: { type: 'string', enum: GRANT_STATUSES, nullable: true, description: 'only the grants in this status (default: all)' },
    cursor: { type: 'string', minLength: 1, maxLength: 200, nullable: true, description: 'the nextCursor of the previous page' },
    limit: { type: 'string', pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$', nullable: true, description: 'grants per page, 1 to 500 (default 100)' },
  },
};

const validGrantsQuery = compile(grantsQuerySchema);
const DEFAULT_LIMIT = 100;

export function readGrantsQuery(query: Record<string, string | string[] | undefined>): GrantQuery {
  // a copy: ajv removes the unknown parameters from what it validates
  const copy: unknown = { ...query };
  if (!validGrantsQuery(copy)) throw toInvalidRequest(validGrantsQuery.errors ?? []);
  const after = listingCursor(copy.cursor);
  return { playerRef: copy.playerRef, campaignRef: copy.campaignRef, status: copy.status, after, limit: copy.limit === undefined ? DEFAULT_LIMIT : Number(copy.limit) };
}

const count = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;
const micro = (description: string) => ({ type: 'string', pattern: '^[0-9]{1,20}$', description: `${description}; decimal micro-units (1.00 = 100000)` }) as const;

export const createdCampaignSchema = objectSchema<CreatedCampaign>({
  campaignId: uuid,
  grants: count('the grants made: one per playerRef'),
});

export const grantPageSchema = objectSchema<GrantPage>({
  grants: {
    type: 'array',
    description: 'oldest grant first (D10)',
    items: objectSchema<GrantView>({
      grantId: uuid,
      campaignId: uuid,
      campaignRef: { type: 'string' },
      playerRef: { type: 'string' },
      gameCode: { type: 'string' },
      currency: { type: 'string' },
      stakeMicro: micro('the stake of each free round'),
      rounds: count('the rounds granted'),
      played: count('the rounds played: the grant\'s bets the wallet accepted or that are in flight; a refused or rolled-back bet gives its round back'),
      remaining: count('rounds - cancelled - played, never below 0; 0 once the campaign is cancelled'),
      cancelled: count('the rounds a cancellation took away'),
      status: { enum: GRANT_STATUSES, description: 'active; used: every round played; expired: past expiresAt with rounds left; cancelled: its campaign was cancelled with rounds left' },
      validFrom: instant,
      expiresAt: instant,
    }),
  },
  nextCursor: orNull({ type: 'string', description: 'pass as `cursor` for the next page; null on the last page (D10)' }),
});

export const campaignTotalsSchema = objectSchema<CampaignTotals>({
  campaignId: uuid,
  campaignRef: { type: 'string' },
  gameCode: { type: 'string' },
  currency: { type: 'string' },
  stakeMicro: micro('the stake of each free round'),
  state: {
    enum: CAMPAIGN_STATES,
    description: 'active; expired: past expiresAt with rounds left; cancelled; finished: every round played (freebet.campaign_finished follows once no bet is undecided)',
  },
  grants: count('the players granted rounds'),
  granted: count('rounds x grants'),
  played: count('the rounds played, across its grants'),
  remaining: count('the rounds neither played nor cancelled; 0 once cancelled'),
  cancelled: count('the rounds a cancellation took away'),
  totalPaidMicro: micro('what the settled free bets paid'),
  validFrom: instant,
  expiresAt: instant,
  createdAt: instant,
  cancelledAt: orNull(instant),
});
