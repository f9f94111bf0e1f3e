import { createHash } from 'node:crypto';
import { isPlayerRef } from '../../platform/validation.js';
import type { ValidationDetail } from '../../platform/errors.js';
import { parseStakeMicro } from '../../domain/money.js';

// D42: the terms of a free-bet campaign, as the operator writes them (POST /v1/freebets, `rgs
// freebets create`), their bounds, and the digest that tells a retry (the same campaignRef
// with the same terms) from a conflict (the same campaignRef with other terms). Pure: the
// game's own bounds (availability, stake limits and step) are checked where its configuration
// is read (campaigns.ts).

export const CAMPAIGN_REF_PATTERN = '^[A-Za-z0-9._:-]{1,64}$';
export const MAX_ROUNDS = 1000;
export const MAX_PLAYERS = 10_000;
// D42: a campaign expires at most 90 days after it is created
export const MAX_VALIDITY_MS = 90 * 24 * 3600 * 1000;

export type CampaignTermsInput = {
  campaignRef: string;
  gameCode: string;
  currency: string;
  stakeMicro: string;
  rounds: number;
  playerRefs: string[];
  validFrom?: string;
  expiresAt: string;
  featureBuy?: boolean;
};

// the terms once read: money a bigint (D18), instants as dates; validFrom undefined when the
// operator left it out (the campaign then starts when it is created)
export type CampaignTerms = {
  campaignRef: string;
  gameCode: string;
  currency: string;
  stakeMicro: bigint;
  rounds: number;
  playerRefs: string[];
  validFrom: Date | undefined;
  expiresAt: Date;
  featureBuy: boolean;
};

const CAMPAIGN_REF = new RegExp(CAMPAIGN_REF_PATTERN);
const CURRENCY = /^[A-Z0-9]{3,10}$/;
// RFC 3339 with a zone, as the API's date-time format reads it
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

const problem = (path: string, keyword: string, message: string): ValidationDetail => ({ path, keyword, message });

function instant(text: string | undefined): Date | undefined {
  if (text === undefined || !INSTANT.test(text)) return undefined;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

// The bounds that hold whatever the time (D9, D24): the fields' forms and counts, every
// playerRef valid and none twice. An empty list of problems: the terms, read.
export function readCampaignTerms(input: CampaignTermsInput): { terms: CampaignTerms; problems: [] } | { terms?: undefined; problems: ValidationDetail[] } {
  const problems: ValidationDetail[] = [];
  if (!CAMPAIGN_REF.test(input.campaignRef)) problems.push(problem('/campaignRef', 'pattern', 'must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_", ":" and "-"'));
  if (input.gameCode.length < 1 || input.gameCode.length > 64) problems.push(problem('/gameCode', 'maxLength', 'must be 1 to 64 characters'));
  if (!CURRENCY.test(input.currency)) problems.push(problem('/currency', 'pattern', 'must be 3 to 10 characters of A-Z and 0-9'));
  // D18: a decimal string that fits a BIGINT, never a number
  const stake = typeof input.stakeMicro === 'string' ? (parseStakeMicro(input.stakeMicro) ?? 0n) : 0n;
  if (stake <= 0n) problems.push(problem('/stakeMicro', 'pattern', 'must be a positive decimal integer of micro-units, at most 2^63-1'));
  if (!Number.isInteger(input.rounds) || input.rounds < 1 || input.rounds > MAX_ROUNDS) problems.push(problem('/rounds', 'maximum', `must be an integer from 1 to ${MAX_ROUNDS}`));
  if (input.playerRefs.length < 1 || input.playerRefs.length > MAX_PLAYERS) problems.push(problem('/playerRefs', 'maxItems', `must hold 1 to ${MAX_PLAYERS} playerRefs`));
  const seen = new Set<string>();
  for (const [index, playerRef] of input.playerRefs.entries()) {
    if (!isPlayerRef(playerRef)) {
      problems.push(problem(`/playerRefs/${index}`, 'pattern', 'must be a playerRef: 1 to 128 characters, never an e-mail address or a phone number (D9)'));
    } else if (seen.has(playerRef)) {
      problems.push(problem(`/playerRefs/${index}`, 'uniqueItems', 'must not repeat a playerRef'));
    }
    seen.add(playerRef);
    // the first few name the fault; more would only lengthen the answer
    if (problems.length >= 20) break;
  }
  const validFrom = instant(input.validFrom);
  if (input.validFrom !== undefined && !validFrom) problems.push(problem('/validFrom', 'format', 'must be an RFC 3339 date-time'));
  const expiresAt = instant(input.expiresAt);
  if (!expiresAt) problems.push(problem('/expiresAt', 'format', 'must be an RFC 3339 date-time'));
  if (problems.length > 0 || !expiresAt) return { problems };
  return {
    terms: {
      campaignRef: input.campaignRef,
      gameCode: input.gameCode,
      currency: input.currency,
      stakeMicro: stake,
      rounds: input.rounds,
      playerRefs: input.playerRefs,
      validFrom,
      expiresAt,
      featureBuy: input.featureBuy === true,
    },
    problems: [],
  };
}

// The bounds of the campaign's window, checked when it is created (a retry of a campaign
// already made is answered as it was, D42): it ends after it starts and after now, at most 90
// days after now.
export function windowProblems(terms: CampaignTerms, now: Date): ValidationDetail[] {
  const from = terms.validFrom ?? now;
  const problems: ValidationDetail[] = [];
  if (terms.expiresAt.getTime() <= from.getTime()) problems.push(problem('/expiresAt', 'formatMinimum', 'must be after validFrom (default: now)'));
  else if (terms.expiresAt.getTime() <= now.getTime()) problems.push(problem('/expiresAt', 'formatMinimum', 'must be in the future'));
  if (terms.expiresAt.getTime() > now.getTime() + MAX_VALIDITY_MS) problems.push(problem('/expiresAt', 'formatMaximum', 'must be at most 90 days from now'));
  return problems;
}

// SHA-256 hex of the canonical terms: fixed field order, the stake as its decimal, instants to
// the millisecond (as stored), the playerRefs sorted by code unit, validFrom null when left
// out (a retry without it is the same request, whenever it is sent)
export function termsDigest(terms: CampaignTerms): string {
  const canonical = JSON.stringify([
    'D42/1',
    terms.campaignRef,
    terms.gameCode,
    terms.currency,
    terms.stakeMicro.toString(),
    terms.rounds,
    [...terms.playerRefs].sort(),
    terms.validFrom?.toISOString() ?? null,
    terms.expiresAt.toISOString(),
    terms.featureBuy,
  ]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
