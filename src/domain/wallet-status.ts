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

// success: commit. clean_reject: a healthy "no" (no rollback, no retry). terminate: end the
// session. fatal: alert, no retry. uncertain: the effect is unknown: roll back / retry.
// treat_as_settled: win or rollback on a transaction the operator does not know.
export type StatusClass = 'success' | 'clean_reject' | 'terminate' | 'fatal' | 'uncertain' | 'treat_as_settled';

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
