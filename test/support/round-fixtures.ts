import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../../src/shared/game/context.js';
import type { RoundState, WalletCall, WalletJob } from '../../src/shared/platform/db/client.js';
import { sealServerSeed } from '../../src/shared/game/fairness/seed-vault.js';
import { generateClientSeed, generateServerSeed, serverSeedHash } from '../../src/shared/domain/seeds.js';
import { DEFAULT_GAME_CONFIG } from '../../src/shared/game/operators/game-config.js';
import type { WalletEndpoint } from '../../src/shared/domain/wallet-status.js';
import { ARCHIVE_ORDER } from '../../src/shared/platform/db/partitions.js';
import { monthOf } from '../../src/shared/domain/months.js';
import { uniqueId } from './harness.js';

// Game history written straight to the database, for tests of what reads it (reconciliation,
// proofs) without running the engine: a session with its seed, finished or unfinished rounds
// with their bet, wallet audit rows and wallet jobs. Rows are shaped as the engine leaves
// them (D1: one round per session per cycle, nonces 0, 1, ... under the seed; one bet per
// round). Call the helpers one after another: each round takes the engine's next cycle
// number and the seed's next nonce.
//
//   const f = roundFixtures(h.svc);
//   const session = await f.session(operator.operatorId);
//   const round = await f.round(session, { at, bet: { amountMicro: 1_000_000n, payoutMicro: 1_940_000n } });
//   await f.walletCall(operator.operatorId, { endpoint: 'bet', transactionUuid: round.bet.betTransactionUuid });

export type SessionFixture = {
  operatorId: string;
  sessionId: string;
  seedId: string;
  // the plain server seed, so that a proof can be checked against it
  serverSeed: string;
  clientSeed: string;
  playerRef: string;
  gameCode: string;
  currency: string;
  demo: boolean;
};

export type SessionOptions = { playerRef?: string; gameCode?: string; currency?: string; demo?: boolean; createdAt?: Date };

export type BetOptions = {
  side?: 'LOW' | 'HIGH';
  // default 1_000_000n (10.00)
  amountMicro?: bigint;
  isFree?: boolean;
  // present: the bet won and this net payout was booked (0n: a free bet's zero-payout win);
  // absent: the bet lost (a settled lost bet records 0)
  payoutMicro?: bigint;
};

export type RoundOptions = {
  // default SETTLED; BETTING_OPEN, ROLLING and RESULT leave the round unfinished, its bet ACCEPTED
  state?: RoundState;
  // when the round settled (SETTLED) or was voided (VOIDED); default now
  at?: Date;
  // default 20 s before `at`
  createdAt?: Date;
  // a VOIDED round that had settled first (a win that exhausted its retries, contract 4.2)
  settledAt?: Date;
  // default: the bet's side when it won, the other side when it lost; none before RESULT
  // nor for a round voided without settling
  outcomeSide?: 'LOW' | 'HIGH' | null;
  // the round's one bet (D1); default a lost 10.00 bet on LOW
  bet?: BetOptions;
};

export type BetFixture = {
  betId: string;
  betTransactionUuid: string;
  winTransactionUuid: string | null;
  rollbackTransactionUuid: string | null;
};

export type RoundFixture = { roundId: string; cycleId: string; nonce: number; bet: BetFixture };

export type WalletCallOptions = {
  endpoint: WalletEndpoint;
  transactionUuid?: string | null;
  sessionId?: string | null;
  attempt?: number;
  // default RS_OK; null: no response recorded
  status?: string | null;
  // default 200 when a status is given, else null
  httpStatus?: number | null;
  // default 25
  latencyMs?: number | null;
  error?: string | null;
  // default now
  createdAt?: Date;
};

export type WalletJobOptions = {
  endpoint: WalletEndpoint;
  transactionUuid?: string;
  betId?: string | null;
  // default: win for a win job, round_voided for a rollback, uncertain_bet otherwise
  purpose?: string;
  abandonedAt?: Date | null;
  completedAt?: Date | null;
  createdAt?: Date;
};

// D2: LOW is a face of 1-3, HIGH of 4-6; the fixtures use 2 and 5
const OUTCOME_FACE = { LOW: 2, HIGH: 5 } as const;

export function roundFixtures(svc: Pick<ServiceContext, 'db' | 'config'>) {
  const { db } = svc;

  // D36: rows of a past month need that month's partitions, which `rgs partitions ensure`
  // makes in a deployment; the test database starts with the current month's
  async function partitionsFor(at: Date): Promise<void> {
    for (const table of ARCHIVE_ORDER) await db.$executeRawUnsafe('SELECT rgs_ensure_month_partition($1, $2::date)', table, `${monthOf(at)}-01`);
  }

  async function session(operatorId: string, options: SessionOptions = {}): Promise<SessionFixture> {
    const gameCode = options.gameCode ?? 'dice';
    const currency = options.currency ?? 'EUR';
    const demo = options.demo ?? false;
    const createdAt = options.createdAt ?? new Date();
    const sessionId = randomUUID();
    const seedId = randomUUID();
    const serverSeed = generateServerSeed();
    const clientSeed = generateClientSeed();
    const playerRef = options.playerRef ?? uniqueId('player');
    await db.engine.upsert({
      where: { operatorId_gameCode_currency: { operatorId, gameCode, currency } },
      create: { operatorId, gameCode, currency },
      update: {},
    });
    await db.session.create({
      data: {
        id: sessionId,
        operatorId,
        playerRef,
        gameCode,
        currency,
        lang: 'en',
        jurisdiction: 'MT',
        mode: demo ? 'DEMO' : 'REAL',
        demoBalanceMicro: demo ? 100_000_000n : null,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + 60 * 60_000),
        seeds: {
          create: {
            id: seedId,
            encryptedServerSeed: sealServerSeed(svc.config.masterKey, seedId, serverSeed),
            serverSeedHash: serverSeedHash(serverSeed),
            clientSeed,
            createdAt,
          },
        },
      },
    });
    return { operatorId, sessionId, seedId, serverSeed, clientSeed, playerRef, gameCode, currency, demo };
  }

  async function round(owner: SessionFixture, options: RoundOptions = {}): Promise<RoundFixture> {
    const state = options.state ?? 'SETTLED';
    const at = options.at ?? new Date();
    const createdAt = options.createdAt ?? new Date(at.getTime() - 20_000);
    const betOptions = options.bet ?? {};
    const side = betOptions.side ?? 'LOW';
    const won = betOptions.payoutMicro !== undefined;
    // settled, possibly voided afterwards
    const settled = state === 'SETTLED' || options.settledAt !== undefined;
    const losingSide = side === 'LOW' ? 'HIGH' : 'LOW';
    const outcomeSide = options.outcomeSide !== undefined ? options.outcomeSide : settled || state === 'RESULT' ? (won ? side : losingSide) : null;
    const { operatorId, gameCode, currency } = owner;
    const roundId = randomUUID();
    const bet: BetFixture = {
      betId: randomUUID(),
      betTransactionUuid: randomUUID(),
      winTransactionUuid: won && settled ? randomUUID() : null,
      rollbackTransactionUuid: state === 'VOIDED' ? randomUUID() : null,
    };

    await partitionsFor(createdAt);
    const cycleId = await newCycle(owner, createdAt);
    const { nextNonce } = await db.seed.update({ where: { id: owner.seedId }, data: { nextNonce: { increment: 1 } } });
    const nonce = nextNonce - 1;
    // the bet comes first: its roundId is allocated at placement and the round references it
    await db.bet.create({
      data: {
        id: bet.betId,
        operatorId,
        sessionId: owner.sessionId,
        cycleId,
        roundId,
        playerRef: owner.playerRef,
        gameCode,
        currency,
        side,
        amountMicro: betOptions.amountMicro ?? 1_000_000n,
        isFree: betOptions.isFree ?? false,
        status: state === 'SETTLED' ? 'SETTLED' : state === 'VOIDED' ? 'VOIDED' : 'ACCEPTED',
        betTransactionUuid: bet.betTransactionUuid,
        winTransactionUuid: bet.winTransactionUuid,
        rollbackTransactionUuid: bet.rollbackTransactionUuid,
        payoutMicro: settled ? (betOptions.payoutMicro ?? 0n) : null,
        demo: owner.demo,
        createdAt,
        // D36: its cycle's start, the month it is kept in
        cycleCreatedAt: createdAt,
        acceptedAt: createdAt,
        settledAt: state === 'SETTLED' ? at : null,
        voidedAt: state === 'VOIDED' ? at : null,
      },
    });
    await db.round.create({
      data: {
        id: roundId,
        operatorId,
        sessionId: owner.sessionId,
        cycleId,
        seedId: owner.seedId,
        betId: bet.betId,
        gameCode,
        currency,
        nonce,
        state,
        settled: state === 'SETTLED' || state === 'VOIDED',
        lowWeight: DEFAULT_GAME_CONFIG.lowWeight,
        highWeight: DEFAULT_GAME_CONFIG.highWeight,
        outcomeSide,
        outcomeSum: outcomeSide === null ? null : OUTCOME_FACE[outcomeSide],
        diceValues: outcomeSide === null ? [] : [OUTCOME_FACE[outcomeSide]],
        demo: owner.demo,
        createdAt,
        cycleCreatedAt: createdAt,
        resultAt: outcomeSide === null ? null : createdAt,
        settledAt: state === 'SETTLED' ? at : (options.settledAt ?? null),
        voidedAt: state === 'VOIDED' ? at : null,
        voidReason: state === 'VOIDED' ? (settled ? 'win_exhausted' : 'terminated') : null,
      },
    });
    return { roundId, cycleId, nonce, bet };
  }

  // a finished cycle of the session's engine, numbered after the engine's last one (the
  // engine row is locked so that the numbers stay unique)
  async function newCycle(owner: SessionFixture, createdAt: Date): Promise<string> {
    const { operatorId, gameCode, currency } = owner;
    const id = randomUUID();
    await db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM engines WHERE operator_id = ${operatorId} AND game_code = ${gameCode} AND currency = ${currency} FOR UPDATE`;
      const last = await tx.cycle.aggregate({ where: { operatorId, gameCode, currency }, _max: { number: true } });
      const { lowWeight, highWeight, ...config } = DEFAULT_GAME_CONFIG;
      await tx.cycle.create({
        data: {
          id,
          operatorId,
          gameCode,
          currency,
          number: (last._max.number ?? 0) + 1,
          phase: 'FINISHED',
          ...config,
          lowWeight,
          highWeight,
          createdAt,
          finishedAt: createdAt,
        },
      });
    });
    return id;
  }

  async function walletCall(operatorId: string, options: WalletCallOptions): Promise<WalletCall> {
    const status = options.status === undefined ? 'RS_OK' : options.status;
    const latencyMs = options.latencyMs === undefined ? 25 : options.latencyMs;
    const createdAt = options.createdAt ?? new Date();
    const requestUuid = randomUUID();
    await partitionsFor(createdAt);
    return db.walletCall.create({
      data: {
        id: randomUUID(),
        operatorId,
        sessionId: options.sessionId ?? null,
        endpoint: options.endpoint,
        requestUuid,
        transactionUuid: options.transactionUuid ?? null,
        attempt: options.attempt ?? 1,
        requestBody: JSON.stringify({ requestUuid }),
        httpStatus: options.httpStatus === undefined ? (status === null ? null : 200) : options.httpStatus,
        status,
        latencyMs,
        error: options.error ?? null,
        createdAt,
        respondedAt: status === null ? null : new Date(createdAt.getTime() + (latencyMs ?? 0)),
      },
    });
  }

  async function walletJob(operatorId: string, options: WalletJobOptions): Promise<WalletJob> {
    await partitionsFor(options.createdAt ?? new Date());
    const purpose = options.purpose ?? (options.endpoint === 'win' ? 'win' : options.endpoint === 'rollback' ? 'round_voided' : 'uncertain_bet');
    const transactionUuid = options.transactionUuid ?? randomUUID();
    return db.walletJob.create({
      data: {
        id: randomUUID(),
        operatorId,
        endpoint: options.endpoint,
        transactionUuid,
        betId: options.betId ?? null,
        purpose,
        payload: { operatorId, transactionUuid },
        abandonedAt: options.abandonedAt ?? null,
        completedAt: options.completedAt ?? null,
        createdAt: options.createdAt ?? new Date(),
      },
    });
  }

  return { session, round, walletCall, walletJob };
}
