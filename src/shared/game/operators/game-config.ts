import type { Db } from '../../platform/db/client.js';
import { CredentialError } from '../../wallet/credentials.js';
import { GameConfigError } from '../../domain/games/config.js';
import { diceModule, type DiceConfig } from '../../domain/games/dice.js';
import { isKnownGame } from '../../domain/games/index.js';
import { formatMultiplier, multiplierScaledOf } from '../../domain/payout.js';

// Dice configuration per (operator, game, currency) (contract 2.12, DECISIONS D9, D18).

// the dice module's defaults (D39), which are contract 2.12's and D9's
export const DEFAULT_GAME_CONFIG: Readonly<DiceConfig> = diceModule.config.defaults;

export type GameConfigValues = DiceConfig;

// D18: payoutMultiplier is a decimal with at most 5 fractional digits, held scaled by 100000
// (read and written by domain/payout.ts).
export function parseMultiplier(text: string): bigint {
  if (!/^[0-9]{1,6}(?:\.[0-9]{1,5})?$/.test(text)) throw new GameConfigError(`payout multiplier must be a decimal with at most 5 fractional digits: ${text}`);
  const scaled = multiplierScaledOf(text);
  if (scaled === undefined) throw new GameConfigError('payout multiplier must be positive');
  return scaled;
}

export { formatMultiplier, GameConfigError };

export function checkGameConfig(config: GameConfigValues): void {
  const problems: string[] = [];
  if (config.bettingWindowMs <= 0 || config.rollingWindowMs <= 0 || config.cooldownMs < 0) problems.push('windows must be positive (cooldown may be 0)');
  if (config.minBetMicro <= 0n) problems.push('min bet must be positive');
  if (config.maxBetMicro < config.minBetMicro) problems.push('max bet must be at least min bet');
  if (config.commissionMicro < 0n || config.commissionMicro > 100000n) problems.push('commission must be 0 to 100000 micro (0% to 100%)');
  if (config.lowWeight < 0n || config.highWeight < 0n || config.lowWeight + config.highWeight === 0n) {
    problems.push('weights must be non-negative and not both zero (D2)');
  }
  if (problems.length) throw new GameConfigError(problems.join('; '));
}

// db may be a transaction, so that a caller holding one does not need a second connection
export async function loadGameConfig(db: Pick<Db, 'gameConfig'>, operatorId: string, gameCode: string, currency: string): Promise<GameConfigValues> {
  const row = await db.gameConfig.findUnique({ where: { operatorId_gameCode_currency: { operatorId, gameCode, currency } } });
  if (!row) return { ...DEFAULT_GAME_CONFIG };
  const { operatorId: _o, gameCode: _g, currency: _c, updatedAt: _u, ...values } = row;
  return values;
}

export async function setGameConfig(
  db: Db,
  operatorId: string,
  gameCode: string,
  currency: string,
  changes: Partial<GameConfigValues>,
) {
  if (!isKnownGame(gameCode)) throw new GameConfigError(`unknown game: ${gameCode}`);
  const operator = await db.operator.findUnique({ where: { id: operatorId }, select: { id: true } });
  if (!operator) throw new CredentialError(`operator ${operatorId} does not exist`);
  const merged = { ...(await loadGameConfig(db, operatorId, gameCode, currency)), ...changes };
  checkGameConfig(merged);
  await db.gameConfig.upsert({
    where: { operatorId_gameCode_currency: { operatorId, gameCode, currency } },
    create: { operatorId, gameCode, currency, ...merged },
    update: merged,
  });
  return describeGameConfig(operatorId, gameCode, currency, merged);
}

export function describeGameConfig(operatorId: string, gameCode: string, currency: string, config: GameConfigValues) {
  return {
    operatorId,
    gameCode,
    currency,
    bettingWindowMs: config.bettingWindowMs,
    rollingWindowMs: config.rollingWindowMs,
    cooldownMs: config.cooldownMs,
    minBetMicro: config.minBetMicro.toString(),
    maxBetMicro: config.maxBetMicro.toString(),
    commissionMicro: config.commissionMicro.toString(),
    payoutMultiplier: formatMultiplier(config.payoutMultiplierScaled),
    lowWeight: config.lowWeight.toString(),
    highWeight: config.highWeight.toString(),
  };
}
