import { RS_STATUSES } from '../domain/wallet-status.js';

// One error type hierarchy for every role (DECISIONS D3). An AppError carries the HTTP
// status, a stable snake_case code and any extra body fields; anything else that reaches
// the edge is an internal error whose message is never shown to the caller.
//
// ERRORS is the one error table: every code an inbound endpoint can answer, with its HTTP
// status, what it means, what the caller should do, and the body fields and headers it adds
// to {error, message}. The factories below take their status from it, the OpenAPI document
// and docs/errors.md are generated from it (src/api/openapi.ts, src/api/error-catalogue.ts).

export type ErrorBody = { error: string; message: string } & Record<string, unknown>;

// A JSON Schema (2020-12) fragment describing one extra body field.
export type FieldSchema = Record<string, unknown> & { description: string };

export type ErrorSpec = {
  status: number;
  meaning: string;
  action: string;
  // body fields besides error and message, all present on every answer with this code
  fields?: Record<string, FieldSchema>;
  // response headers besides the security headers every answer carries (contract 5.5)
  headers?: Record<string, FieldSchema>;
  // a second HTTP status the code answers with on some routes, and when (D32: a live
  // round's dispute pack is 409 round_not_settled, its proof 404)
  alsoStatus?: { status: number; when: string };
};

// contract 2.4 reasons of the 422 session rejection, with D7's causes
export const SESSION_REJECTIONS = {
  self_excluded: {
    meaning: 'the operator wallet answered RS_ERROR_USER_DISABLED to the launch balance call without naming another reason (D7)',
    action: 'do not launch this player; the wallet decided it (self-exclusion is the operator\'s concern, contract 8.3)',
  },
  kyc_required: {
    meaning: 'the operator wallet answered RS_ERROR_USER_DISABLED with the message "kyc_required" (D7)',
    action: 'complete the player\'s KYC at the operator, then launch again',
  },
  jurisdiction_blocked: {
    meaning: 'the jurisdiction is on the operator\'s block list (D7)',
    action: 'do not launch players of this jurisdiction, or change the operator\'s block list',
  },
  currency_not_permitted: {
    meaning: 'the currency is not in the operator\'s permitted list (D7)',
    action: 'launch in a permitted currency, or add it to the operator\'s list',
  },
  operator_suspended: {
    meaning: 'the operator is suspended (D7)',
    action: 'no session can be launched until the operator is reinstated',
  },
  rg_limit_set_too_loose: {
    meaning: 'rgLimits are missing a limit the jurisdiction requires, or exceed its maximum (D7)',
    action: 'send rgLimits within the jurisdiction\'s maxima (the message names the fields)',
  },
} as const satisfies Record<string, { meaning: string; action: string }>;

export type SessionRejectionReason = keyof typeof SESSION_REJECTIONS;
export const SESSION_REJECTION_REASONS = Object.keys(SESSION_REJECTIONS) as SessionRejectionReason[];

// D3: the 401 of a signature problem has the wallet-response shape
const SIGNATURE_FIELDS = {
  status: { const: 'RS_ERROR_INVALID_SIGNATURE', description: 'the wallet-response status of a signature problem (D3)' },
  requestUuid: {
    type: 'string',
    description: 'the requestUuid of the request body when it is a UUID that can be read, else "" (D3, contract 5.2)',
  },
} satisfies Record<string, FieldSchema>;

const RETRY_AFTER = (what: string): FieldSchema => ({ type: 'string', pattern: '^[1-9][0-9]*$', description: what });

const REQUEST_UUID_SAFE =
  'retry with the same requestUuid: the effect happens at most once (D17)';

// a refusal that names how long to wait, in the header and in the body
const waitAndRetry = (cite: string) =>
  ({
    action: `wait Retry-After seconds, then retry; ${REQUEST_UUID_SAFE}`,
    fields: { retryAfterSeconds: { type: 'integer', minimum: 1, description: 'the Retry-After value as a number' } },
    headers: { 'Retry-After': RETRY_AFTER(`whole seconds to wait before retrying, at least 1 (${cite})`) },
  }) as const;

export const ERRORS = {
  invalid_request: {
    status: 400,
    meaning: 'the request is malformed: a body that is not JSON, a missing required field, or a field of the wrong type, pattern or bound (D3, D9)',
    action: 'fix the request; `details` names the fields. Sending it again unchanged gets the same answer',
    fields: {
      status: {
        enum: ['RS_ERROR_WRONG_SYNTAX', 'RS_ERROR_WRONG_TYPES'],
        description: 'RS_ERROR_WRONG_SYNTAX: unparseable JSON or a missing required field; RS_ERROR_WRONG_TYPES: a wrong type, pattern or bound (D3)',
      },
      details: {
        type: 'array',
        description: 'one entry per problem: the JSON pointer of the field and the rule it broke, never the value sent (D3)',
        items: {
          type: 'object',
          required: ['path', 'keyword', 'message'],
          properties: { path: { type: 'string' }, keyword: { type: 'string' }, message: { type: 'string' } },
        },
      },
    },
  },
  invalid_signature: {
    status: 401,
    meaning: 'a signing header is missing, the timestamp is not integer seconds, or the signature does not match the request (contract 5.2)',
    action: 'sign METHOD, the exact path, the timestamp and the SHA-256 of the exact body bytes with the API secret (contract 5.1), and send the request again',
    fields: SIGNATURE_FIELDS,
  },
  stale_timestamp: {
    status: 401,
    meaning: 'X-Rgs-Timestamp is outside the operator\'s signature window, 30 seconds by default (contract 5.2 step 2, 8.1)',
    action: 'check the clock of the calling host, then sign the request again with the current time',
    fields: SIGNATURE_FIELDS,
  },
  unknown_key: {
    status: 401,
    meaning: 'X-Rgs-Key-Id names no API credential (a wallet credential does not sign inbound requests, contract 5.3)',
    action: 'sign with the kid of a current API credential of the operator',
    fields: SIGNATURE_FIELDS,
  },
  key_not_valid_now: {
    status: 401,
    meaning: 'the API credential is not valid now: before its notBefore, after its notAfter, or revoked (contract 5.3)',
    action: 'switch to the operator\'s current API credential',
    fields: SIGNATURE_FIELDS,
  },
  key_unavailable: {
    status: 401,
    meaning: "the API credential's public keys cannot be used: its key set (JWKS URL, D34) could not be fetched and no copy fetched in the last 10 minutes is held, or the set (or the stored PEM) holds no key usable for its algorithm (RSA: exponent 65537, 2048 to 4096 bits; D24)",
    action: 'make the key set URL answer 200 with a JWKS (within 5 s, at most 64 KiB) holding a usable key, or add the credential again with one, then send the request again signed afresh',
    fields: SIGNATURE_FIELDS,
  },
  replayed_signature: {
    status: 401,
    meaning: 'this POST, with this timestamp and signature, was already accepted (D17)',
    action: 'a retry must be signed afresh (a new timestamp); reuse the requestUuid to get the stored answer (D17)',
    fields: SIGNATURE_FIELDS,
  },
  bot_challenge_verification_failed: {
    status: 401,
    meaning: 'the bot challenge is enabled and the token is missing, was not passed, or could not be verified with the verifier configured to fail closed (contract 5.7, D20)',
    action: 'have the player pass the challenge again and send its new token (botChallengeToken or the bot-challenge-response header)',
  },
  ip_not_allowed: {
    status: 403,
    meaning: 'the operator has an IP allow-list and the caller IP is not on it; checked before the signature (contract 5.4)',
    action: 'call from an allowed address, or have the allow-list updated',
  },
  operator_mismatch: {
    status: 403,
    meaning: 'the operatorId of the body or query is not the operator that owns the signing key (contract 4.1 rule 3, D10)',
    action: 'send the operatorId of the signing key\'s operator (or, on a read, leave operatorId out)',
  },
  not_found: {
    status: 404,
    meaning: 'no such route, or no session, round or webhook event of the calling operator with this id (another operator\'s ids read as unknown, D10)',
    action: 'check the path and the id',
  },
  campaign_not_found: {
    status: 404,
    meaning: "no free-bet campaign of the calling operator has this id; another operator's campaign reads the same (D42, D10)",
    action: 'use a campaignId that POST /v1/freebets answered to this operator',
  },
  round_not_found: {
    status: 404,
    meaning: 'the calling operator has no round with this id (D2)',
    action: 'check the roundId (the one sent to the wallet with the bet)',
  },
  round_not_settled: {
    status: 404,
    meaning: 'the round has no outcome yet, or never will: its bet was refused at the wallet (D2, D22); for a dispute pack, the round is still being played (D32)',
    action: 'ask again once the round is settled; for a refused bet, GET /v1/rounds/{roundId} shows why',
    alsoStatus: { status: 409, when: 'GET /v1/rounds/{roundId}/dispute-pack of a round not yet settled or voided (D32)' },
  },
  seed_not_revealed: {
    status: 404,
    meaning: 'the round is settled but its server seed is still in use: it is revealed when the session ends or the seed is rotated (D2, D5)',
    action: 'ask again after revealableAfter, or after terminating the session',
    fields: {
      revealableAfter: { type: 'string', format: 'date-time', description: 'the session\'s expiresAt, when the seed is revealed at the latest (D2)' },
    },
  },
  idempotency_key_reused: {
    status: 409,
    meaning: 'this requestUuid was used on this route within 24 hours with a different body (D17)',
    action: 'use a new requestUuid for a different request; a retry must send the same bytes',
  },
  session_not_active: {
    status: 409,
    meaning: 'the session has already ended: terminated, or expired (D3, D7)',
    action: 'nothing to do: the session cannot be played any more',
  },
  // D42: a campaignRef names one campaign of the operator; a create that reuses it with other
  // terms is not a retry
  campaign_conflict: {
    status: 409,
    meaning: 'a free-bet campaign with this campaignRef exists with other terms (game, currency, stake, rounds, players, validity or featureBuy) (D42)',
    action: 'a retry must send the same terms; a new campaign needs a new campaignRef',
  },
  webhook_not_configured: {
    status: 409,
    meaning: 'the operator has no enabled webhook endpoint, so there is nothing to send an event to (D31)',
    action: 'have the endpoint set with `rgs webhook set --operator ID --url URL`, then ask again',
  },
  payload_too_large: {
    status: 413,
    meaning: 'the request body is over 64 KiB (D9), or over 2 MiB for POST /v1/freebets (D42)',
    action: 'send a smaller body',
  },
  session_rejected: {
    status: 422,
    meaning: 'the session was refused for one of the reasons of contract 2.4 (see the reasons below)',
    action: 'do not retry unchanged; act on `reason`',
    fields: {
      status: { const: 'RS_ERROR_USER_DISABLED', description: 'always RS_ERROR_USER_DISABLED (contract 2.4)' },
      reason: { enum: SESSION_REJECTION_REASONS, description: 'why (contract 2.4, D7)' },
    },
  },
  // D35, D38: its own code, not a session_rejected reason: contract 2.4's reasons (all under
  // RS_ERROR_USER_DISABLED) refuse a player; this refuses the request, whatever the player
  game_not_available: {
    status: 422,
    meaning:
      'gameCode names no game of the catalogue, or one not available to the operator in this currency: dice is available to every operator, any other game once the operator has a configuration for it in the currency (D39)',
    action: 'launch a game GET /v1/games lists for the currency; a game is made available with `rgs game config --operator ID --game CODE --currency CUR`',
  },
  // D42: a free-bet campaign's stake is a stake the game takes from this operator in this currency
  bet_out_of_range: {
    status: 422,
    meaning: "stakeMicro is below the game's minBetMicro, above its maxBetMicro, or not a multiple of its stakeStepMicro for the operator and currency (D42, D46)",
    action: 'send a stake within the bounds and on the step GET /v1/games lists for the game and currency',
  },
  feature_buy_not_available: {
    status: 422,
    meaning: 'featureBuy is true for a game that has no feature to buy: only an instant game may have one, and shared-clock games (dice, crash) have none (D42)',
    action: 'leave featureBuy out (or false) for this game',
  },
  sandbox_only: {
    status: 422,
    meaning: 'the launch carries sandboxSeeds, which only a sandbox operator may send, on a deployment where sandbox is enabled (D35)',
    action: 'leave sandboxSeeds out; a test tenant is made a sandbox operator with `rgs operator update --id ID --sandbox true`',
  },
  rate_limited: {
    status: 429,
    meaning: 'the operator is over its rate limit for this kind of request (contract 8.1, D10), or the key id or the client address sent too many signatures that did not verify (public-key credentials, D24)',
    ...waitAndRetry('contract 8.1, D3'),
  },
  internal_error: {
    status: 500,
    meaning: 'the service failed; the cause is logged on its side and never shown (D3)',
    action: `retry later; ${REQUEST_UUID_SAFE}. Report it if it persists`,
  },
  wallet_unavailable: {
    status: 502,
    meaning: 'the operator wallet could not be asked for the balance at launch: no answer in time, an uncertain answer, no valid wallet credential, or a wallet address that may not be used (D13, D25); no session was created',
    action: `check the wallet and the operator\'s wallet settings, then retry; ${REQUEST_UUID_SAFE}`,
  },
  wallet_rejected: {
    status: 502,
    meaning: 'the operator wallet refused the launch balance call with a status that is neither success nor USER_DISABLED (contract 7.1); no session was created',
    action: 'fix what walletStatus names on the wallet side (a signature, partner, currency or syntax problem), then retry',
    fields: { walletStatus: { enum: RS_STATUSES, description: 'the status the wallet answered (contract 7.1)' } },
  },
  // D37: the process's own work is past its bound (OVERLOAD_DELAY_MS); refused at once
  // rather than queued into every caller's latency
  service_busy: {
    status: 503,
    meaning: 'the service is past its load bound for the moment and refused the request before doing any of it (D37)',
    ...waitAndRetry('D37'),
  },
  service_unavailable: {
    status: 503,
    meaning: 'a dependency of the service (Postgres or Redis) is unavailable for the moment, or the node that answered cannot sign session tokens until it is restarted with its configuration (D38)',
    action: `wait Retry-After seconds, then retry; ${REQUEST_UUID_SAFE}`,
    headers: { 'Retry-After': RETRY_AFTER('seconds to wait before retrying') },
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;
export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

// the codes of one HTTP status
type CodeOf<S extends number> = { [C in ErrorCode]: (typeof ERRORS)[C]['status'] extends S ? C : never }[ErrorCode];

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
    // the code's alsoStatus, on the routes that answer it (ErrorSpec)
    status?: number,
  ) {
    super(message);
    this.name = 'AppError';
    const spec: ErrorSpec = ERRORS[code];
    if (status !== undefined && status !== spec.alsoStatus?.status) throw new Error(`${code} does not answer ${status}`);
    this.status = status ?? spec.status;
  }

  body(): ErrorBody {
    return { error: this.code, message: this.message, ...this.extra };
  }
}

export type ValidationDetail = { path: string; keyword: string; message: string };

// D3: 400 carries RS_ERROR_WRONG_SYNTAX (unparseable, missing field) or RS_ERROR_WRONG_TYPES.
export const invalidRequest = (
  status: 'RS_ERROR_WRONG_SYNTAX' | 'RS_ERROR_WRONG_TYPES',
  message: string,
  details: ValidationDetail[] = [],
) => new AppError('invalid_request', message, { status, details });

// contract 5.2, D3, D17: the signature problems, each a 401 in the wallet-response shape
export const SIGNATURE_ERROR_CODES = [
  'invalid_signature',
  'stale_timestamp',
  'unknown_key',
  'key_not_valid_now',
  'replayed_signature',
  'key_unavailable',
] as const satisfies readonly CodeOf<401>[];

export type SignatureErrorCode = (typeof SIGNATURE_ERROR_CODES)[number];

// D3: 401 uses the wallet-response shape so an operator's wallet tooling can read it.
export const signatureError = (code: SignatureErrorCode, message: string, requestUuid: string) =>
  new AppError(code, message, { status: 'RS_ERROR_INVALID_SIGNATURE', requestUuid });

export const botChallengeFailed = (message: string) => new AppError('bot_challenge_verification_failed', message);

export const ipNotAllowed = () => new AppError('ip_not_allowed', 'caller IP is not on the operator allow-list');

export const operatorMismatch = () => new AppError('operator_mismatch', 'operatorId does not own the signing key');

export const notFound = (code: CodeOf<404> = 'not_found', message = 'not found', extra: Record<string, unknown> = {}) =>
  new AppError(code, message, extra);

export const conflict = (code: CodeOf<409>, message: string) => new AppError(code, message);

// D32: the dispute pack of a round still being played
export const roundNotSettledYet = (message: string) => new AppError('round_not_settled', message, {}, {}, 409);

export const payloadTooLarge = (limitBytes: number) => new AppError('payload_too_large', `request body exceeds ${limitBytes} bytes`);

// contract 2.4: the 422 body is {status, reason}; D3 adds error and message.
export const sessionRejected = (reason: SessionRejectionReason, message: string) =>
  new AppError('session_rejected', message, { status: 'RS_ERROR_USER_DISABLED', reason });

// D39: a launch of a game outside the catalogue or not available to the operator
export const gameNotAvailable = (message: string) => new AppError('game_not_available', message);

// D42: the free-bet campaign refusals
export const betOutOfRange = (message: string) => new AppError('bet_out_of_range', message);
export const featureBuyNotAvailable = (message: string) => new AppError('feature_buy_not_available', message);

// D35: sandboxSeeds from an operator that may not send them
export const sandboxOnly = (message: string) => new AppError('sandbox_only', message);

export const rateLimited = (retryAfterSeconds: number) =>
  new AppError('rate_limited', 'rate limit exceeded', { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });

export const badGateway = (code: CodeOf<502>, message: string, extra: Record<string, unknown> = {}) => new AppError(code, message, extra);

export const serviceBusy = () =>
  new AppError('service_busy', 'the service is busy; retry shortly', { retryAfterSeconds: 1 }, { 'Retry-After': '1' });

export const serviceUnavailable = (message: string) => new AppError('service_unavailable', message, {}, { 'Retry-After': '1' });

export const internalError = () => new AppError('internal_error', 'internal error');

export function toAppError(err: unknown): AppError {
  return err instanceof AppError ? err : internalError();
}
