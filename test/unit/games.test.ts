import { expect } from 'chai';
import { GameConfigError } from '../../src/shared/domain/games/config.js';
import { crashModule } from '../../src/shared/domain/games/crash.js';
import { diceModule } from '../../src/shared/domain/games/dice.js';
import { gemsModule } from '../../src/shared/domain/games/gems.js';
import { GAME_CODES, GAME_MODULES, LAUNCHABLE_GAME_CODES, availableToEveryOperator, gameModule, isKnownGame } from '../../src/shared/domain/games/index.js';

// Games as modules (D39): the registry, and the configuration schemas (defaults, bounds, the
// bound named when a value is refused).

describe('the game registry (D39)', () => {
  it('has a module per game code, each with its kind, name and versions', () => {
    expect(GAME_CODES).to.deep.equal(['dice', 'crash', 'gems']);
    expect(GAME_MODULES.map((m) => [m.gameCode, m.kind, m.name, m.rngVersion, m.mathVersion])).to.deep.equal([
      ['dice', 'shared', 'Dice', 'dice-hmac-sha256-v1', 'dice-1.0.0'],
      ['crash', 'shared', 'Crash', 'crash-hmac-sha256-v1', 'crash-1.0.0'],
      ['gems', 'instant', 'Gem Vault', 'gems-hmac-sha256-v1', 'gems-1.0.0'],
    ]);
    expect(gameModule('dice')).to.equal(diceModule);
    expect(gameModule('crash')).to.equal(crashModule);
    expect(gameModule('gems')).to.equal(gemsModule);
  });

  it('knows no module for an unknown code', () => {
    for (const code of ['roulette', 'DICE', '', 'dice ']) expect(gameModule(code), code).to.equal(undefined);
  });

  it('every game may be launched; dice by every operator, crash and gems by an operator that configured it', () => {
    expect(LAUNCHABLE_GAME_CODES).to.deep.equal(['dice', 'crash', 'gems']);
    expect(availableToEveryOperator('dice')).to.equal(true);
    expect(availableToEveryOperator('crash')).to.equal(false);
    expect(availableToEveryOperator('gems')).to.equal(false);
    expect(isKnownGame('dice')).to.equal(true);
    expect(isKnownGame('crash')).to.equal(true);
    expect(isKnownGame('roulette')).to.equal(false);
  });
});

describe('game configuration schemas (D39, D24)', () => {
  it("crash's defaults are D40's, its bets D9's, and maxPayoutMicro follows maxBetMicro", () => {
    expect(crashModule.config.write(crashModule.config.defaults)).to.deep.equal({
      bettingWindowMs: 6000,
      cooldownMs: 3000,
      minBetMicro: '10000',
      maxBetMicro: '100000000',
      commissionMicro: '3000',
      maxMultiplier: '1000.00',
      maxPayoutMicro: '100000000000',
      stakeStepMicro: '1',
      payoutRounding: 'exact',
    });
    expect(crashModule.config.parse({ maxBetMicro: '5000000' }).maxPayoutMicro).to.equal(5000000000n);
    expect(crashModule.config.parse({ maxBetMicro: '5000000', maxPayoutMicro: '6000000' }).maxPayoutMicro).to.equal(6000000n);
  });

  it('reads what it writes, and integers as strings or JSON integers', () => {
    for (const module of GAME_MODULES) expect(module.config.parse(module.config.write(module.config.defaults))).to.deep.equal(module.config.defaults);
    const config = diceModule.config.parse({ bettingWindowMs: '2000', minBetMicro: 500, payoutMultiplier: '1.98', lowWeight: '2' });
    expect(config).to.include({ bettingWindowMs: 2000, minBetMicro: 500n, payoutMultiplierScaled: 198000n, lowWeight: 2n });
    expect(crashModule.config.parse({ maxMultiplier: '250.50' }).maxMultiplierCents).to.equal(25050n);
  });

  const refused = (module: typeof diceModule | typeof crashModule, input: Record<string, unknown>): string => {
    try {
      module.config.parse(input);
    } catch (err) {
      expect(err).to.be.instanceOf(GameConfigError);
      return (err as Error).message;
    }
    return expect.fail(`accepted ${JSON.stringify(input)}`);
  };

  const REFUSED: [string, typeof diceModule | typeof crashModule, Record<string, unknown>, string][] = [
    ['an unknown key, naming the keys', crashModule, { lowWeight: '1' }, 'lowWeight is not a key of crash (its keys: bettingWindowMs, cooldownMs, minBetMicro, maxBetMicro, commissionMicro, maxMultiplier, maxPayoutMicro, stakeStepMicro, payoutRounding)'],
    ['a stored name for its written key', diceModule, { payoutMultiplierScaled: '200000' }, 'payoutMultiplierScaled is not a key of dice'],
    ['a commission above 100%', crashModule, { commissionMicro: '100001' }, 'commissionMicro must be at most 100000: got 100001'],
    ['a negative window', diceModule, { cooldownMs: -1 }, 'cooldownMs must be at least 0: got -1'],
    ['a zero betting window', crashModule, { bettingWindowMs: 0 }, 'bettingWindowMs must be at least 1: got 0'],
    ['a window past the integer column', diceModule, { rollingWindowMs: 2 ** 31 }, 'rollingWindowMs must be at most 2147483647: got 2147483648'],
    ['an amount past BIGINT', diceModule, { maxBetMicro: '9223372036854775808' }, 'maxBetMicro must be at most 9223372036854775807: got 9223372036854775808'],
    ['a zero min bet', crashModule, { minBetMicro: '0' }, 'minBetMicro must be at least 1: got 0'],
    ['maxMultiplier above 1000x', crashModule, { maxMultiplier: '1000.01' }, 'maxMultiplier must be at most 1000.00: got 1000.01'],
    ['maxMultiplier below 1.01x', crashModule, { maxMultiplier: '1.00' }, 'maxMultiplier must be at least 1.01: got 1.00'],
    ['maxMultiplier without its two decimals', crashModule, { maxMultiplier: '1000' }, 'maxMultiplier must be a multiplier with two decimals, as a string ("2.00"): got "1000"'],
    ['a multiplier as a JSON number', diceModule, { payoutMultiplier: 1.98 }, 'payoutMultiplier must be a decimal string with at most 5 decimals, above 0: got 1.98'],
    ['a payout multiplier of 0', diceModule, { payoutMultiplier: '0' }, 'payoutMultiplier must be a decimal string with at most 5 decimals, above 0: got "0"'],
    ['a fractional amount', crashModule, { maxBetMicro: '10.5' }, 'maxBetMicro must be a whole number, as a decimal string or a JSON integer: got "10.5"'],
    ['max bet below min bet, naming the min', diceModule, { minBetMicro: '500', maxBetMicro: '100' }, 'maxBetMicro must be at least minBetMicro (500): got 100'],
    ['weights both zero', diceModule, { lowWeight: '0', highWeight: 0 }, 'lowWeight and highWeight must not both be 0 (D2)'],
    ['a payout cap below the largest bet at 1.01x', crashModule, { maxBetMicro: '100000', maxPayoutMicro: '100999' }, 'maxPayoutMicro must be at least 101000 (maxBetMicro * 1.01, rounded up): got 100999'],
  ];
  for (const [label, module, input, message] of REFUSED) {
    it(`refuses ${label}`, () => {
      expect(refused(module, input)).to.include(message).and.match(new RegExp(`^${module.gameCode} config: `));
    });
  }

  it('names every problem at once', () => {
    const message = refused(crashModule, { colour: 'red', cooldownMs: -5, maxMultiplier: '0.50' });
    expect(message.split('; ')).to.have.length(3);
  });
});
