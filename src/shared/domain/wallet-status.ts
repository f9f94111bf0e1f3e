// Wallet statuses and how the service reacts to each (contract 7.1, DECISIONS D13).
// Pure: the wallet client classifies a response here; callers switch on the class.

export const RS_STATUSES = [
  'RS_OK',
  'RS_ERROR_UNKNOWN',
  'RS_ERROR_INVALID_TOKEN',
  'RS_ERROR_INVALID_SIGNATURE',
  'RS_ERROR_INVALID_PARTNER',
  'RS_ERROR_NOT_ENOUGH_MONEY',
  'RS_ERROR_USER_DISABLED',
  'RS_ERROR_TOKEN_EXPIRED',
  'RS_ERROR_WRONG_CURRENCY',
  'RS_ERROR_WRONG_SYNTAX',
  'RS_ERROR_WRONG_TYPES',
  'RS_ERROR_DUPLICATE_TRANSACTION',
  'RS_ERROR_TRANSACTION_DOES_NOT_EXIST',
  'RS_ERROR_LIMIT_REACHED',
  'RS_ERROR_TIMEOUT',
] as const;

export type RsStatus = (typeof RS_STATUSES)[number];

export const isRsStatus = (value: unknown): value is RsStatus =>
  typeof value === 'string' && (RS_STATUSES as readonly string[]).includes(value);

export type WalletEndpoint = 'balance' | 'bet' | 'win' | 'rollback';

// The statuses by which a wallet says the movement happened (contract 7.1: success).
const SUCCESS_STATUSES: readonly RsStatus[] = ['RS_OK', 'RS_ERROR_DUPLICATE_TRANSACTION'];

// What the HTTP status lets the service take a well-formed answer's RS_ status for
// (contract 2.10, 7.1, D13). The HTTP status is transport: a 2xx is taken at its word, and so
// is a 4xx that refuses (docs/wallet-api.md asks for 401 RS_ERROR_INVALID_SIGNATURE; a
// refusal moved nothing, so reading it as uncertain would send a rollback for nothing and
// count a wallet that answers as one that is down). A 4xx that claims success contradicts
// itself, and a 5xx is the wallet saying it does not know (7.1 lists 5xx as uncertain):
// both, and any other status, are RS_ERROR_UNKNOWN whatever the body says.
export function statusOfAnswer(httpStatus: number, status: RsStatus): { status: RsStatus; problem?: string } {
  if (httpStatus >= 200 && httpStatus <= 299) return { status };
  if (httpStatus >= 400 && httpStatus <= 499) {
    if (!SUCCESS_STATUSES.includes(status)) return { status };
    return { status: 'RS_ERROR_UNKNOWN', problem: `HTTP ${httpStatus} with ${status}: a success needs a 2xx` };
  }
  return { status: 'RS_ERROR_UNKNOWN', problem: `HTTP ${httpStatus}` };
}

// What the service does on each class of answer (contract 7.1, D13); the wallet section of
// the OpenAPI document and docs/errors.md are generated from this table.
export const STATUS_CLASSES = {
  success: 'committed: the movement happened (or had already happened)',
  clean_reject: 'a healthy "no": a debit so answered is not taken (the bet is REJECTED); no rollback, no retry',
  terminate: 'the session is ended (contract 3.3); a debit so answered is REJECTED without rollback',
  fatal: 'the service alerts; no retry',
  uncertain:
    'the effect is unknown: a debit is REJECTED and rolled back, a win or rollback is retried, a launch answers 502 (no session); it counts towards the circuit breaker (3.4, D13)',
  treat_as_settled: 'the service alerts and takes the win or rollback as settled (contract 4.2)',
} as const satisfies Record<string, string>;

export type StatusClass = keyof typeof STATUS_CLASSES;

export function classifyStatus(status: RsStatus, endpoint: WalletEndpoint): StatusClass {
  switch (status) {
    case 'RS_OK':
    case 'RS_ERROR_DUPLICATE_TRANSACTION':
      return 'success';
    case 'RS_ERROR_NOT_ENOUGH_MONEY':
    case 'RS_ERROR_LIMIT_REACHED':
      return 'clean_reject';
    // 7.1: USER_DISABLED is a clean reject that also terminates the session; TOKEN_EXPIRED
    // terminates; INVALID_TOKEN is fatal and terminates.
    case 'RS_ERROR_USER_DISABLED':
    case 'RS_ERROR_TOKEN_EXPIRED':
    case 'RS_ERROR_INVALID_TOKEN':
      return 'terminate';
    case 'RS_ERROR_INVALID_SIGNATURE':
    case 'RS_ERROR_INVALID_PARTNER':
    case 'RS_ERROR_WRONG_CURRENCY':
    case 'RS_ERROR_WRONG_SYNTAX':
    case 'RS_ERROR_WRONG_TYPES':
      return 'fatal';
    case 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST':
      return endpoint === 'win' || endpoint === 'rollback' ? 'treat_as_settled' : 'fatal';
    case 'RS_ERROR_TIMEOUT':
    case 'RS_ERROR_UNKNOWN':
      return 'uncertain';
  }
}
