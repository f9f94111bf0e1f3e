// The operator side of the wallet protocol as pure logic (no I/O): request validation
// (contract 2.5-2.9), the two-key idempotency model (4.3) and the operator rules of the four
// wallet endpoints (4.2). The HTTP wrapper is wallet-simulator.ts.
//
// Money is bigint micro-units throughout (D18): amounts arrive as strings and are converted
// with BigInt only after they match the MicroAmount pattern (2.1).

import { isMicroAmount } from '../shared/domain/money.js';
import type { WalletEndpoint } from '../shared/domain/wallet-status.js';

export type { WalletEndpoint };

export const WALLET_ENDPOINTS: readonly WalletEndpoint[] = ['balance', 'bet', 'win', 'rollback'];

// Rules of the contract the simulator can be told to break, one per check of the wallet
// conformance check (`rgs wallet-check`, D38), so that the check is shown to catch each: a
// wallet that is wrong in exactly one way. None is broken unless asked for.
export const BROKEN_RULES = [
  'accepts_bad_signature', // 5.2: a call with a bad signature is processed
  'idempotency_ignored', // 4.3 rule 1: a known requestUuid is processed again, not answered from the store
  'duplicate_transaction_debits', // 4.3 rule 2: a bet's transactionUuid under a new requestUuid debits again
  'win_ignores_reference', // 4.2: a win whose referenced bet is unknown is credited anyway
  'rollback_does_not_refund', // 4.2: a rollback of a booked bet answers RS_OK and credits nothing
  'rollback_unknown_refused', // 4.2: a rollback of an unknown transaction is answered RS_ERROR_UNKNOWN
  'no_tombstones', // D27: a debit arriving after its own rollback is booked
  'overdraws', // 4.2: a bet above the balance is booked (no RS_ERROR_NOT_ENOUGH_MONEY)
  'free_bet_debits_cash', // 2.6, 8.4 (D42): a free bet (isFree) debits its stake as a paid bet does
  'numeric_amounts', // 2.10: balanceMicro is sent as a JSON number
  'no_request_uuid_echo', // 2.10: answers carry no requestUuid
] as const;
export type BrokenRule = (typeof BROKEN_RULES)[number];

// contract 2.10
export type WalletResponse = {
  status: string;
  requestUuid: string;
  balanceMicro?: string;
  currency?: string;
  message?: string;
};

// One booked money movement. amountMicro is the absolute amount moved; the direction follows
// from the type: a bet debits, a win credits, a rollback reverses the entry it references.
export type LedgerEntry = {
  type: 'bet' | 'win' | 'rollback';
  transactionUuid: string;
  referenceTransactionUuid?: string;
  roundId?: string;
  operatorId: string;
  playerRef: string;
  currency: string;
  amountMicro: bigint;
  balanceAfterMicro: bigint;
  requestUuid: string;
  at: Date;
  // D42: a free bet (contract 2.6 isFree), booked with its stake and moving no cash, and the
  // bonusRef (the campaignRef) it came with; absent for every other entry
  isFree?: true;
  bonusRef?: string;
};

type CommonFields = {
  requestUuid: string;
  operatorId: string;
  playerRef: string;
  currency: string;
  gameCode: string;
};

export type WalletRequest =
  | (CommonFields & { endpoint: 'balance' })
  | (CommonFields & { endpoint: 'bet'; transactionUuid: string; amountMicro: bigint; roundId: string; isFree?: boolean; bonusRef?: string })
  | (CommonFields & {
      endpoint: 'win';
      transactionUuid: string;
      referenceTransactionUuid: string;
      amountMicro: bigint;
      roundId: string;
    })
  | (CommonFields & {
      endpoint: 'rollback';
      transactionUuid: string;
      referenceTransactionUuid: string;
      roundId?: string;
    });

type MovementRequest = Exclude<WalletRequest, { endpoint: 'balance' }>;

// ---------------------------------------------------------------------------------------
// Validation (contract 2.1, 2.5-2.9). A missing required field is RS_ERROR_WRONG_SYNTAX; a
// present field of the wrong type, pattern or D9 bound is RS_ERROR_WRONG_TYPES. Unknown fields
// are ignored (D9).

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CURRENCY_PATTERN = /^[A-Z0-9]{3,10}$/;
const FX_RATE_PATTERN = /^[0-9]+(\.[0-9]+)?$/;
const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

type FieldRule = { description: string; accepts: (value: unknown) => boolean };

const uuid: FieldRule = {
  description: 'a Uuid',
  accepts: (v) => typeof v === 'string' && UUID_PATTERN.test(v),
};
// D9 bounds count characters (Unicode code points, as JSON Schema's maxLength does), not
// UTF-16 code units: an emoji is one character.
const text = (maxLength: number): FieldRule => ({
  description: `a string of 1 to ${maxLength} characters`,
  accepts: (v) => typeof v === 'string' && v.length > 0 && [...v].length <= maxLength,
});
const nonEmptyString: FieldRule = {
  description: 'a non-empty string',
  accepts: (v) => typeof v === 'string' && v.length > 0,
};
const currency: FieldRule = {
  description: 'a currency code (D9: 3-10 of A-Z, 0-9)',
  accepts: (v) => typeof v === 'string' && CURRENCY_PATTERN.test(v),
};
const anyString: FieldRule = { description: 'a string', accepts: (v) => typeof v === 'string' };
const microAmount: FieldRule = {
  description: 'a MicroAmount string of integer micro-units',
  accepts: isMicroAmount,
};
const boolean: FieldRule = { description: 'a boolean', accepts: (v) => typeof v === 'boolean' };
const object: FieldRule = {
  description: 'an object',
  accepts: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};
const fxRate: FieldRule = {
  description: 'a decimal string',
  accepts: (v) => typeof v === 'string' && FX_RATE_PATTERN.test(v),
};
const timestamp: FieldRule = {
  description: 'an ISO 8601 date-time',
  accepts: (v) => typeof v === 'string' && DATE_TIME_PATTERN.test(v) && !Number.isNaN(Date.parse(v)),
};

type Schema = { required: Record<string, FieldRule>; optional: Record<string, FieldRule> };

// contract 2.5
const COMMON: Record<string, FieldRule> = {
  requestUuid: uuid,
  operatorId: nonEmptyString,
  playerRef: text(128), // D9
  currency,
  gameCode: text(64), // D9
};

// contract 2.6 optional fields, shared by the win request (2.7)
const ATTRIBUTION: Record<string, FieldRule> = {
  isFree: boolean,
  isBonus: boolean,
  bonusRef: anyString,
  wageringContributionMicro: microAmount,
  walletCurrency: currency,
  fxRate,
  fxRateAt: timestamp,
  fxRateSource: anyString,
  meta: object,
};

const SCHEMAS: Record<WalletEndpoint, Schema> = {
  // 2.9
  balance: { required: COMMON, optional: {} },
  // 2.6
  bet: {
    required: { ...COMMON, transactionUuid: uuid, amountMicro: microAmount, roundId: uuid },
    optional: ATTRIBUTION,
  },
  // 2.7
  win: {
    required: { ...COMMON, transactionUuid: uuid, referenceTransactionUuid: uuid, amountMicro: microAmount, roundId: uuid },
    optional: { ...ATTRIBUTION, jackpotContributionMicro: microAmount },
  },
  // 2.8
  rollback: {
    required: { ...COMMON, transactionUuid: uuid, referenceTransactionUuid: uuid },
    optional: { roundId: uuid, meta: object },
  },
};

export type ValidationResult =
  | { ok: true; request: WalletRequest }
  | { ok: false; status: 'RS_ERROR_WRONG_SYNTAX' | 'RS_ERROR_WRONG_TYPES'; message: string };

export function validateWalletRequest(endpoint: WalletEndpoint, body: unknown): ValidationResult {
  if (!object.accepts(body)) {
    return { ok: false, status: 'RS_ERROR_WRONG_SYNTAX', message: 'body must be a JSON object' };
  }
  const fields = body as Record<string, unknown>;
  const schema = SCHEMAS[endpoint];
  const missing = Object.keys(schema.required).filter((name) => fields[name] === undefined);
  if (missing.length > 0) {
    return { ok: false, status: 'RS_ERROR_WRONG_SYNTAX', message: `missing field(s): ${missing.join(', ')}` };
  }
  const rules = [
    ...Object.entries(schema.required),
    ...Object.entries(schema.optional).filter(([name]) => fields[name] !== undefined),
  ];
  for (const [name, rule] of rules) {
    if (!rule.accepts(fields[name])) {
      return { ok: false, status: 'RS_ERROR_WRONG_TYPES', message: `${name} must be ${rule.description}` };
    }
  }
  const field = (name: string): string => fields[name] as string;
  const common = {
    requestUuid: field('requestUuid'),
    operatorId: field('operatorId'),
    playerRef: field('playerRef'),
    currency: field('currency'),
    gameCode: field('gameCode'),
  };
  switch (endpoint) {
    case 'balance':
      return { ok: true, request: { endpoint, ...common } };
    case 'bet': {
      const amountMicro = BigInt(field('amountMicro'));
      // contract 2.1 and 2.6: a stake is a positive integer.
      if (amountMicro <= 0n) {
        return { ok: false, status: 'RS_ERROR_WRONG_TYPES', message: 'amountMicro of a bet must be positive' };
      }
      return {
        ok: true,
        request: {
          endpoint,
          ...common,
          transactionUuid: field('transactionUuid'),
          amountMicro,
          roundId: field('roundId'),
          ...(fields.isFree === true ? { isFree: true } : {}),
          ...(fields.isFree === true && typeof fields.bonusRef === 'string' ? { bonusRef: fields.bonusRef } : {}),
        },
      };
    }
    case 'win': {
      const amountMicro = BigInt(field('amountMicro'));
      // contract 2.1 and 4.2: a win may be "0" but never negative.
      if (amountMicro < 0n) {
        return { ok: false, status: 'RS_ERROR_WRONG_TYPES', message: 'amountMicro of a win must not be negative' };
      }
      return {
        ok: true,
        request: {
          endpoint,
          ...common,
          transactionUuid: field('transactionUuid'),
          referenceTransactionUuid: field('referenceTransactionUuid'),
          amountMicro,
          roundId: field('roundId'),
        },
      };
    }
    case 'rollback':
      return {
        ok: true,
        request: {
          endpoint,
          ...common,
          transactionUuid: field('transactionUuid'),
          referenceTransactionUuid: field('referenceTransactionUuid'),
          ...(fields.roundId === undefined ? {} : { roundId: field('roundId') }),
        },
      };
  }
}

// ---------------------------------------------------------------------------------------
// The ledger.

export type LedgerOutcome = {
  response: WalletResponse;
  // Strictness findings: things a correct service never sends.
  violations: string[];
};

type CachedResponse = { rawBody: string; response: WalletResponse };

const accountKey = (playerRef: string, currency: string): string => `${playerRef}\u0000${currency}`;

// D27: a wallet remembers every rollback for at least 24 hours; the simulator keeps them 4
// calendar months, as large aggregators do.
export const TOMBSTONE_MONTHS = 4;

const tombstoneExpiry = (at: Date): Date => {
  const until = new Date(at.getTime());
  until.setUTCMonth(until.getUTCMonth() + TOMBSTONE_MONTHS);
  return until;
};

export class WalletLedger {
  private readonly balances = new Map<string, bigint>();
  private readonly disabled = new Map<string, string>();
  // contract 4.3 rule 3: responses stored under (operatorId, endpoint, requestUuid).
  private readonly responses = new Map<string, CachedResponse>();
  private readonly booked = new Map<string, LedgerEntry>();
  private readonly rolledBack = new Set<string>();
  // D42: the free bets booked (contract 2.6 isFree): their debit moved no money
  private readonly freeBets = new Set<string>();
  // bet transactionUuid -> transactionUuid of its standing (not rolled back) win
  private readonly winOfBet = new Map<string, string>();
  // D27: referenced transactionUuid -> when its tombstone expires, for every rollback
  // received, booked or not; in the order written, so the expired ones are at the front
  private readonly tombstones = new Map<string, Date>();
  readonly entries: LedgerEntry[] = [];
  // the rules the simulator was told to break (BROKEN_RULES); the ledger consults its own
  readonly broken = new Set<BrokenRule>();

  // the clock of the tombstones (D27); tests move it
  constructor(private readonly now: () => Date = () => new Date()) {}

  setBalance(playerRef: string, currency: string, balanceMicro: bigint): void {
    this.balances.set(accountKey(playerRef, currency), balanceMicro);
  }

  balanceOf(playerRef: string, currency: string): bigint {
    return this.balances.get(accountKey(playerRef, currency)) ?? 0n;
  }

  accounts(): { playerRef: string; currency: string; balanceMicro: bigint }[] {
    return [...this.balances].map(([key, balanceMicro]) => {
      const [playerRef = '', currency = ''] = key.split('\u0000');
      return { playerRef, currency, balanceMicro };
    });
  }

  disablePlayer(playerRef: string, message: string): void {
    this.disabled.set(playerRef, message);
  }

  reset(): void {
    this.balances.clear();
    this.disabled.clear();
    this.responses.clear();
    this.booked.clear();
    this.rolledBack.clear();
    this.freeBets.clear();
    this.winOfBet.clear();
    this.tombstones.clear();
    this.entries.length = 0;
    this.broken.clear();
  }

  // Handles one valid request. rawBody is the exact body text, used to spot a requestUuid
  // reused for a different body (the service resends identical bytes on a retry, D6).
  handle(request: WalletRequest, rawBody: string): LedgerOutcome {
    const cacheKey = `${request.operatorId}\u0000${request.endpoint}\u0000${request.requestUuid}`;
    // contract 4.3 rules 1 and 4: requestUuid first; the cached response, unchanged.
    const cached = this.broken.has('idempotency_ignored') ? undefined : this.responses.get(cacheKey);
    if (cached) {
      const violations =
        cached.rawBody === rawBody
          ? []
          : [`${request.endpoint}: requestUuid ${request.requestUuid} was reused with a different body`];
      return { response: cached.response, violations };
    }
    const outcome = this.process(request);
    this.responses.set(cacheKey, { rawBody, response: outcome.response });
    return outcome;
  }

  private process(request: WalletRequest): LedgerOutcome {
    if (request.endpoint === 'balance') return this.balance(request);
    // contract 4.3 rule 2: transactionUuid second.
    const existing = this.booked.get(request.transactionUuid);
    const debitsAgain = request.endpoint === 'bet' && this.broken.has('duplicate_transaction_debits');
    if (existing && !debitsAgain) return this.duplicate(request, existing);
    switch (request.endpoint) {
      case 'bet':
        return this.bet(request);
      case 'win':
        return this.win(request);
      case 'rollback':
        return this.rollback(request);
    }
  }

  private respond(request: WalletRequest, status: string, message?: string): WalletResponse {
    return {
      status,
      requestUuid: request.requestUuid,
      balanceMicro: this.balanceOf(request.playerRef, request.currency).toString(),
      currency: request.currency,
      ...(message === undefined ? {} : { message }),
    };
  }

  private ok(request: WalletRequest, violations: string[] = []): LedgerOutcome {
    return { response: this.respond(request, 'RS_OK'), violations };
  }

  private refuse(request: WalletRequest, status: string, message?: string, violations: string[] = []): LedgerOutcome {
    return { response: this.respond(request, status, message), violations };
  }

  // contract 4.2: RS_ERROR_USER_DISABLED on balance (and bet) terminates the session.
  private disabledRefusal(request: WalletRequest): LedgerOutcome | undefined {
    const message = this.disabled.get(request.playerRef);
    return message === undefined ? undefined : this.refuse(request, 'RS_ERROR_USER_DISABLED', message);
  }

  private balance(request: Extract<WalletRequest, { endpoint: 'balance' }>): LedgerOutcome {
    return this.disabledRefusal(request) ?? this.ok(request);
  }

  // contract 4.3 rule 2: the movement is already booked under another requestUuid. A retry of
  // the same movement must carry the same content; anything else is a service bug.
  private duplicate(request: MovementRequest, existing: LedgerEntry): LedgerOutcome {
    const differences: string[] = [];
    if (existing.type !== request.endpoint) differences.push(`type ${existing.type} vs ${request.endpoint}`);
    if (existing.playerRef !== request.playerRef) differences.push('playerRef');
    if (existing.currency !== request.currency) differences.push('currency');
    if (request.endpoint !== 'rollback' && existing.amountMicro !== request.amountMicro) {
      differences.push(`amountMicro ${existing.amountMicro} vs ${request.amountMicro}`);
    }
    if (request.endpoint !== 'bet' && existing.referenceTransactionUuid !== request.referenceTransactionUuid) {
      differences.push('referenceTransactionUuid');
    }
    const violations =
      differences.length === 0
        ? []
        : [
            `${request.endpoint}: transactionUuid ${request.transactionUuid} reused for a different movement ` +
              `(${differences.join(', ')})`,
          ];
    return this.refuse(request, 'RS_ERROR_DUPLICATE_TRANSACTION', undefined, violations);
  }

  // contract 4.2, bet rules
  private bet(request: Extract<WalletRequest, { endpoint: 'bet' }>): LedgerOutcome {
    // D27: the debit arrives after its own rollback (delayed on the way): it moves no money
    if (this.tombstoned(request.transactionUuid)) {
      return this.refuse(request, 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', 'transaction was rolled back');
    }
    const refusal = this.disabledRefusal(request);
    if (refusal) return refusal;
    // contract 2.6, 8.4: a free bet debits no cash (booked with the stake, moving nothing); the
    // balance is answered all the same
    if (request.isFree && !this.broken.has('free_bet_debits_cash')) {
      this.book(request, 'bet', 0n, request.amountMicro, { isFree: true, ...(request.bonusRef === undefined ? {} : { bonusRef: request.bonusRef }) });
      this.freeBets.add(request.transactionUuid);
      return this.ok(request);
    }
    if (this.balanceOf(request.playerRef, request.currency) < request.amountMicro && !this.broken.has('overdraws')) {
      return this.refuse(request, 'RS_ERROR_NOT_ENOUGH_MONEY');
    }
    this.book(request, 'bet', -request.amountMicro, request.amountMicro);
    return this.ok(request);
  }

  // contract 4.2, win rules
  private win(request: Extract<WalletRequest, { endpoint: 'win' }>): LedgerOutcome {
    const bet = this.booked.get(request.referenceTransactionUuid);
    if (!bet && this.broken.has('win_ignores_reference')) {
      this.book(request, 'win', request.amountMicro, request.amountMicro);
      return this.ok(request);
    }
    if (!bet) return this.refuse(request, 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', 'referenced bet not found');
    const prefix = `win ${request.transactionUuid}`;
    const mismatch = this.referenceMismatch(request, bet, 'bet');
    if (mismatch) {
      return this.refuse(request, 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', 'referenced bet not found', [
        `${prefix}: ${mismatch}`,
      ]);
    }
    if (this.rolledBack.has(bet.transactionUuid)) {
      return this.refuse(request, 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', 'referenced bet was rolled back', [
        `${prefix}: bet ${bet.transactionUuid} was already rolled back`,
      ]);
    }
    const standingWin = this.winOfBet.get(bet.transactionUuid);
    if (standingWin !== undefined) {
      // "called once per winning bet": a second credit is refused, not paid.
      return this.refuse(request, 'RS_ERROR_DUPLICATE_TRANSACTION', 'bet already has a win', [
        `${prefix}: second win for bet ${bet.transactionUuid} (already credited by ${standingWin})`,
      ]);
    }
    const violations =
      bet.roundId === request.roundId ? [] : [`${prefix}: roundId ${request.roundId} differs from the bet's ${bet.roundId}`];
    this.book(request, 'win', request.amountMicro, request.amountMicro);
    this.winOfBet.set(bet.transactionUuid, request.transactionUuid);
    return this.ok(request, violations);
  }

  // contract 4.2, rollback rules 1-4
  private rollback(request: Extract<WalletRequest, { endpoint: 'rollback' }>): LedgerOutcome {
    this.tombstone(request.referenceTransactionUuid);
    const target = this.booked.get(request.referenceTransactionUuid);
    // rule 4
    if (!target && this.broken.has('rollback_unknown_refused')) return this.refuse(request, 'RS_ERROR_UNKNOWN', 'transaction not found');
    if (!target) return this.refuse(request, 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
    const mismatch = this.referenceMismatch(request, target, 'bet or win');
    if (mismatch) {
      return this.refuse(request, 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', undefined, [
        `rollback ${request.transactionUuid}: ${mismatch}`,
      ]);
    }
    // rule 3
    if (this.rolledBack.has(target.transactionUuid)) return this.ok(request);
    if (this.broken.has('rollback_does_not_refund')) {
      this.rolledBack.add(target.transactionUuid);
      return this.ok(request);
    }
    // rule 1 credits the stake back, rule 2 debits the payout back
    // a free bet's rollback gives back nothing: it took nothing
    const delta = target.type === 'bet' ? (this.freeBets.has(target.transactionUuid) ? 0n : target.amountMicro) : -target.amountMicro;
    this.book(request, 'rollback', delta, target.amountMicro);
    this.rolledBack.add(target.transactionUuid);
    if (target.type === 'win' && target.referenceTransactionUuid !== undefined) {
      this.winOfBet.delete(target.referenceTransactionUuid);
    }
    return this.ok(request);
  }

  // D27: a tombstone for every rollback, kept from the first one received
  private tombstone(transactionUuid: string): void {
    if (this.broken.has('no_tombstones')) return;
    this.forgetExpiredTombstones();
    if (!this.tombstones.has(transactionUuid)) this.tombstones.set(transactionUuid, tombstoneExpiry(this.now()));
  }

  private tombstoned(transactionUuid: string): boolean {
    this.forgetExpiredTombstones();
    return this.tombstones.has(transactionUuid);
  }

  private forgetExpiredTombstones(): void {
    const now = this.now().getTime();
    for (const [transactionUuid, expiresAt] of this.tombstones) {
      if (expiresAt.getTime() > now) return;
      this.tombstones.delete(transactionUuid);
    }
  }

  // A reference must name an entry of the expected kind, for the same account.
  private referenceMismatch(
    request: MovementRequest,
    target: LedgerEntry,
    expected: 'bet' | 'bet or win',
  ): string | undefined {
    const kindOk = expected === 'bet' ? target.type === 'bet' : target.type !== 'rollback';
    if (!kindOk) return `references ${target.type} ${target.transactionUuid}, not a ${expected}`;
    if (target.playerRef !== request.playerRef || target.currency !== request.currency) {
      const owner = `${target.playerRef}/${target.currency}`;
      return `references ${target.type} ${target.transactionUuid} of another account (${owner})`;
    }
    return undefined;
  }

  private book(request: MovementRequest, type: LedgerEntry['type'], deltaMicro: bigint, amountMicro: bigint, free: Pick<LedgerEntry, 'isFree' | 'bonusRef'> = {}): void {
    const key = accountKey(request.playerRef, request.currency);
    const balanceAfterMicro = (this.balances.get(key) ?? 0n) + deltaMicro;
    this.balances.set(key, balanceAfterMicro);
    const entry: LedgerEntry = {
      type,
      transactionUuid: request.transactionUuid,
      ...(request.endpoint === 'bet' ? {} : { referenceTransactionUuid: request.referenceTransactionUuid }),
      ...(request.roundId === undefined ? {} : { roundId: request.roundId }),
      operatorId: request.operatorId,
      playerRef: request.playerRef,
      currency: request.currency,
      amountMicro,
      balanceAfterMicro,
      requestUuid: request.requestUuid,
      at: new Date(),
      ...free,
    };
    this.booked.set(entry.transactionUuid, entry);
    this.entries.push(entry);
  }
}
