import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import type { EngineKey } from '../../domain/engine-key.js';
import type { Connected, RoundPhase } from '../../domain/player-channel.js';
import { ensureEngine, roundState } from '../rounds/clock.js';
import { gameModule } from '../../domain/games/index.js';
import { DEFAULT_GAME_CONFIG, formatMultiplier, loadGameConfig, type AnyGameConfig } from '../operators/game-config.js';
import { connectBalance } from './session-sockets.js';
import { minorUnitMicro } from '../../domain/currency.js';
import { balanceRequest } from '../../wallet/requests.js';
import { usableFreeBets } from '../freebets/usable.js';
import { instantModule, type InstantModule } from '../plays/place.js';
import { jurisdictionView } from '../sessions/jurisdiction.js';

// What `connected` shows (D4): the session, its current seed, the engine's state (and
// config: the cycle's snapshot, else the operator's, else the defaults; D46: the stake step's
// default is the currency's minor unit).
const CONNECTED = statement(
  'realtime_connected',
  `SELECT s.mode, s.demo_balance_micro, s.currency, s.lang, s.jurisdiction, s.return_url, s.operator_id, s.player_ref, s.game_code,
          sd.server_seed_hash, sd.client_seed, sd.next_nonce, e.running,
          c.id AS cycle_id, c.phase, c.phase_ends_at, c.flight_started_at, c.params,
          COALESCE(c.min_bet_micro, g.min_bet_micro) AS min_bet_micro, COALESCE(c.max_bet_micro, g.max_bet_micro) AS max_bet_micro,
          COALESCE(c.payout_multiplier_scaled, g.payout_multiplier_scaled) AS payout_multiplier_scaled,
          COALESCE(c.commission_micro, g.commission_micro) AS commission_micro,
          COALESCE(c.stake_step_micro, g.stake_step_micro) AS stake_step_micro
   FROM sessions s
   LEFT JOIN seeds sd ON sd.session_id = s.id AND sd.current
   LEFT JOIN engines e ON e.operator_id = s.operator_id AND e.game_code = s.game_code AND e.currency = s.currency
   LEFT JOIN cycles c ON c.id = e.current_cycle_id
   LEFT JOIN game_configs g ON g.operator_id = s.operator_id AND g.game_code = s.game_code AND g.currency = s.currency
   WHERE s.id = $1`,
);

type ConnectedRow = {
  mode: 'REAL' | 'DEMO';
  demo_balance_micro: bigint | null;
  currency: string;
  lang: string;
  jurisdiction: string;
  return_url: string | null;
  operator_id: string;
  player_ref: string;
  game_code: string;
  server_seed_hash: string | null;
  client_seed: string | null;
  next_nonce: number | null;
  running: boolean | null;
  cycle_id: string | null;
  phase: RoundPhase | null;
  phase_ends_at: Date | null;
  flight_started_at: Date | null;
  params: Record<string, unknown> | null;
  min_bet_micro: bigint | null;
  max_bet_micro: bigint | null;
  payout_multiplier_scaled: bigint | null;
  commission_micro: bigint | null;
  stake_step_micro: bigint | null;
};

// D4 `connected`, read after the socket joined its rooms (no round_state is missed), with
// the engine's clock started first if it is not running (D1)
export async function connectedMessage(svc: ServiceContext, sessionId: string, engine: EngineKey): Promise<Connected> {
  let row = (await svc.sql.query<ConnectedRow>(CONNECTED, [sessionId]))[0]!;
  const instant = instantModule(row.game_code);
  if (!row.running && !instant) {
    await ensureEngine(svc, engine);
    row = (await svc.sql.query<ConnectedRow>(CONNECTED, [sessionId]))[0]!;
  }
  // D41: an instant game's terms and pool follow the operator's configuration, read once
  const instantConfig = instant ? await loadGameConfig(svc.db, row.operator_id, row.game_code, row.currency) : undefined;
  const money = (value: bigint | null, fallback: bigint) => (value ?? fallback).toString();
  // D44: the profile the session plays under, and where the player stands
  const jurisdiction = await jurisdictionView(svc, sessionId, row.jurisdiction);
  return {
    sessionId,
    serverSeedHash: row.server_seed_hash,
    clientSeed: row.client_seed,
    nonce: row.next_nonce ?? 0,
    balanceMicro: row.mode === 'DEMO' ? (row.demo_balance_micro?.toString() ?? '0') : await connectBalanceOf(svc, sessionId, row),
    currency: row.currency,
    config: instant ? instantTerms(instantConfig!, instant) : {
      minBetMicro: money(row.min_bet_micro, DEFAULT_GAME_CONFIG.minBetMicro),
      maxBetMicro: money(row.max_bet_micro, DEFAULT_GAME_CONFIG.maxBetMicro),
      stakeStepMicro: money(row.stake_step_micro, minorUnitMicro(row.currency)),
      commissionMicro: money(row.commission_micro, DEFAULT_GAME_CONFIG.commissionMicro),
      // the game's own terms (D39): dice's payout multiplier; a flight's maxMultiplier and
      // payout cap (D40), from the cycle's snapshot
      ...(gameModule(row.game_code)?.flight
        ? flightTerms(row.params)
        : { payoutMultiplier: formatMultiplier(row.payout_multiplier_scaled ?? DEFAULT_GAME_CONFIG.payoutMultiplierScaled) }),
    },
    roundState: row.cycle_id
      ? roundState({ id: row.cycle_id, phase: row.phase!, phaseEndsAt: row.phase_ends_at, flightStartedAt: row.flight_started_at }, svc.now())
      : null,
    gameCode: row.game_code,
    mode: row.mode === 'DEMO' ? 'demo' : 'real',
    lang: row.lang,
    returnUrl: row.return_url,
    // D42: none for a demo session
    freeBets: row.mode === 'DEMO' ? [] : await usableFreeBets(svc, sessionId),
    ...(instant ? { jackpot: await jackpotOf(svc, row, instantConfig!, instant) } : {}),
    ...(jurisdiction ? { jurisdiction } : {}),
  };
}

// D41: an instant game's terms, from the operator's configuration (its plays snapshot it each)
function instantTerms(config: AnyGameConfig, module: InstantModule): Connected['config'] {
  const featureBuyCost = module.instant.featureBuyCost(config);
  return {
    minBetMicro: config.minBetMicro.toString(),
    maxBetMicro: config.maxBetMicro.toString(),
    stakeStepMicro: config.stakeStepMicro.toString(),
    commissionMicro: '0',
    maxMultiplier: module.maxMultiplier(config),
    minRoundMs: module.instant.minRoundMs(config),
    ...(featureBuyCost === null ? {} : { featureBuyCost: featureBuyCost.toString() }),
  };
}

// the pool as it stands, or its seed before the first play fed it
async function jackpotOf(svc: ServiceContext, row: ConnectedRow, config: AnyGameConfig, module: InstantModule): Promise<NonNullable<Connected['jackpot']>> {
  const pool = await svc.db.jackpotPool.findUnique({ where: { operatorId_currency: { operatorId: row.operator_id, currency: row.currency } }, select: { poolMicro: true } });
  const poolMicro = pool?.poolMicro ?? module.instant.jackpotSeedMicro(config);
  return { currency: row.currency, poolMicro: poolMicro.toString() };
}

// a flight's terms as the cycle's snapshot wrote them (its params: D39)
const flightTerms = (params: Record<string, unknown> | null) => ({
  maxMultiplier: String(params?.maxMultiplier ?? '1000.00'),
  ...(typeof params?.maxPayoutMicro === 'string' ? { maxPayoutMicro: params.maxPayoutMicro } : {}),
});

// contract 4.2: /wallet/balance is called at session start and optionally on reconnect;
// a balance that cannot be read is shown as unknown (null), never guessed. D24: the
// connects of one session make at most one call per CONNECT_BALANCE_WINDOW_MS between them,
// so a token opening sockets in a loop cannot open its operator's balance circuit. The
// connect that calls shows the wallet's answer; the others of the window show that answer,
// or the balance a later balance_update of the session carried (session-sockets.ts), or
// null while the call is still in flight.
const connectBalanceOf = (svc: ServiceContext, sessionId: string, session: Pick<ConnectedRow, 'operator_id' | 'player_ref' | 'currency' | 'game_code'>) =>
  connectBalance(svc.redis, sessionId, () => walletBalance(svc, sessionId, session));

async function walletBalance(svc: ServiceContext, sessionId: string, session: Pick<ConnectedRow, 'operator_id' | 'player_ref' | 'currency' | 'game_code'>) {
  try {
    const result = await svc.wallet.call({
      operatorId: session.operator_id,
      endpoint: 'balance',
      sessionId,
      fields: balanceRequest({ operatorId: session.operator_id, playerRef: session.player_ref, currency: session.currency, gameCode: session.game_code }),
    });
    return result.statusClass === 'success' && result.balanceMicro !== undefined ? result.balanceMicro.toString() : null;
  } catch (err) {
    svc.logger.warn({ err, sessionId }, 'balance for connected could not be read');
    return null;
  }
}
