// One error type hierarchy for every role (DECISIONS D3). An AppError carries the HTTP
// status, a stable snake_case code and any extra body fields; anything else that reaches
// the edge is an internal error whose message is never shown to the caller.

export type ErrorBody = { error: string; message: string } & Record<string, unknown>;

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
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
) => new AppError(400, 'invalid_request', message, { status, details });

export type SignatureErrorCode =
  | 'invalid_signature'
  | 'stale_timestamp'
  | 'unknown_key'
  | 'key_not_valid_now'
  | 'replayed_signature';

// D3: 401 uses the wallet-response shape so an operator's wallet tooling can read it.
export const signatureError = (code: SignatureErrorCode, message: string, requestUuid: string) =>
  new AppError(401, code, message, { status: 'RS_ERROR_INVALID_SIGNATURE', requestUuid });

export const botChallengeFailed = (message: string) =>
  new AppError(401, 'bot_challenge_verification_failed', message);

export const ipNotAllowed = () =>
  new AppError(403, 'ip_not_allowed', 'caller IP is not on the operator allow-list');

export const operatorMismatch = () =>
  new AppError(403, 'operator_mismatch', 'operatorId does not own the signing key');

export const notFound = (code = 'not_found', message = 'not found', extra: Record<string, unknown> = {}) =>
  new AppError(404, code, message, extra);

export const conflict = (code: string, message: string) => new AppError(409, code, message);

export const payloadTooLarge = (limitBytes: number) =>
  new AppError(413, 'payload_too_large', `request body exceeds ${limitBytes} bytes`);

export type SessionRejectionReason =
  | 'self_excluded'
  | 'kyc_required'
  | 'jurisdiction_blocked'
  | 'currency_not_permitted'
  | 'operator_suspended'
  | 'rg_limit_set_too_loose';

export const SESSION_REJECTION_REASONS: readonly SessionRejectionReason[] = [
  'self_excluded',
  'kyc_required',
  'jurisdiction_blocked',
  'currency_not_permitted',
  'operator_suspended',
  'rg_limit_set_too_loose',
];

// contract 2.4: the 422 body is {status, reason}; D3 adds error and message.
export const sessionRejected = (reason: SessionRejectionReason, message: string) =>
  new AppError(422, 'session_rejected', message, { status: 'RS_ERROR_USER_DISABLED', reason });

export const rateLimited = (retryAfterSeconds: number) =>
  new AppError(
    429,
    'rate_limited',
    'rate limit exceeded',
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );

export const notImplemented = (message: string) => new AppError(501, 'not_implemented', message);

export const badGateway = (code: string, message: string, extra: Record<string, unknown> = {}) =>
  new AppError(502, code, message, extra);

export const serviceUnavailable = (message: string) =>
  new AppError(503, 'service_unavailable', message, {}, { 'Retry-After': '1' });

export const internalError = () => new AppError(500, 'internal_error', 'internal error');

export function toAppError(err: unknown): AppError {
  return err instanceof AppError ? err : internalError();
}
