import { expect } from 'chai';
import {
  DEFAULT_GAME_CONFIG,
  GameConfigError,
  formatMultiplier,
  parseMultiplier,
} from '../../src/shared/game/operators/game-config.js';
import { diceModule } from '../../src/shared/domain/games/dice.js';

// contract 2.12 (defaults), DECISIONS D2 (weights), D9 (bet bounds), D18 (payoutMultiplier:
// a decimal with at most 5 fractional digits, held as an integer scaled by 100000).

describe('game config', () => {
  it('has the contract 2.12 and D9 defaults', () => {
    expect(DEFAULT_GAME_CONFIG).to.deep.equal({
      bettingWindowMs: 15000,
      rollingWindowMs: 4000,
      cooldownMs: 3000,
      minBetMicro: 10000n,
      maxBetMicro: 100000000n,
      commissionMicro: 3000n,
      payoutMultiplierScaled: 200000n,
      lowWeight: 1n,
      highWeight: 1n,
      stakeStepMicro: 1n,
      payoutRounding: 'exact',
    });
  });

  describe('parseMultiplier / formatMultiplier (D18)', () => {
    const table: [string, bigint, string][] = [
      ['2', 200000n, '2'],
      ['2.0', 200000n, '2'],
      ['2.00000', 200000n, '2'],
      ['1.95', 195000n, '1.95'],
      ['1.5', 150000n, '1.5'],
      ['1.00001', 100001n, '1.00001'],
      ['0.5', 50000n, '0.5'],
      ['0.00001', 1n, '0.00001'],
      ['1000', 100000000n, '1000'],
      ['12.34567', 1234567n, '12.34567'],
    ];
    for (const [text, scaled, formatted] of table) {
      it(`"${text}" is ${scaled} scaled and prints as "${formatted}"`, () => {
        expect(parseMultiplier(text)).to.equal(scaled);
        expect(formatMultiplier(scaled)).to.equal(formatted);
        expect(parseMultiplier(formatMultiplier(scaled))).to.equal(scaled);
      });
    }

    for (const bad of ['1.000001', '-1', '-1.5', 'abc', '', '0', '0.0', '0.00000', '1e2', ' 2', '2 ', '1.', '.5', '1,95', '+2', 'Infinity', 'NaN']) {
      it(`refuses ${JSON.stringify(bad)}`, () => {
        expect(() => parseMultiplier(bad)).to.throw(GameConfigError);
      });
    }
  });

  describe("the dice module's configuration (D39, D46)", () => {
    const parse = (input: Record<string, unknown>) => diceModule.config.parse(input, { currency: 'EUR' });

    const accepted: [string, Record<string, unknown>][] = [
      ['the defaults', {}],
      ['min equal to max', { minBetMicro: '500', maxBetMicro: '500' }],
      ['cooldown 0', { cooldownMs: 0 }],
      ['commission 0', { commissionMicro: '0' }],
      ['commission 100%', { commissionMicro: '100000' }],
      ['one weight zero', { lowWeight: '0', highWeight: '5' }],
      ['the other weight zero', { lowWeight: '3', highWeight: '0' }],
      ['min bet of 1 micro', { minBetMicro: '1' }],
      ['a stake step of 1 micro', { stakeStepMicro: '1' }],
      ['payouts rounded to the minor unit', { payoutRounding: 'minor_unit' }],
    ];
    for (const [name, changes] of accepted) {
      it(`accepts ${name}`, () => {
        expect(() => parse(changes)).not.to.throw();
      });
    }

    const refused: [string, Record<string, unknown>, RegExp][] = [
      ['min above max', { minBetMicro: '1000', maxBetMicro: '999' }, /maxBetMicro must be at least minBetMicro/],
      ['min bet 0', { minBetMicro: '0' }, /minBetMicro must be at least 1/],
      ['negative min bet', { minBetMicro: '-1', maxBetMicro: '10' }, /minBetMicro must be at least 1/],
      ['betting window 0', { bettingWindowMs: 0 }, /bettingWindowMs must be at least 1/],
      ['rolling window 0', { rollingWindowMs: 0 }, /rollingWindowMs must be at least 1/],
      ['negative cooldown', { cooldownMs: -1 }, /cooldownMs must be at least 0/],
      ['commission above 100%', { commissionMicro: '100001' }, /commissionMicro must be at most 100000/],
      ['negative commission', { commissionMicro: '-1' }, /commissionMicro must be at least 0/],
      ['both weights zero', { lowWeight: '0', highWeight: '0' }, /must not both be 0/],
      ['negative weight', { lowWeight: '-1', highWeight: '2' }, /lowWeight must be at least 0/],
      ['a stake step of 0', { stakeStepMicro: '0' }, /stakeStepMicro must be at least 1/],
      ['an unknown rounding', { payoutRounding: 'cents' }, /payoutRounding must be one of exact, minor_unit/],
      ['an unknown key', { colour: 'red' }, /colour is not a key of dice/],
    ];
    for (const [name, changes, message] of refused) {
      it(`refuses ${name}`, () => {
        expect(() => parse(changes)).to.throw(GameConfigError, message);
      });
    }

    it('names every problem at once', () => {
      expect(() => parse({ minBetMicro: '0', commissionMicro: '200000', stakeStepMicro: '0' }))
        .to.throw(GameConfigError)
        .with.property('message')
        .that.matches(/minBetMicro/)
        .and.matches(/commissionMicro/)
        .and.matches(/stakeStepMicro/);
    });

    it("D46: the stake step defaults to the currency's minor unit, and to 1 micro-unit for a code Intl does not know", () => {
      const step = (currency?: string) => diceModule.config.parse({}, currency === undefined ? {} : { currency }).stakeStepMicro;
      expect([step('EUR'), step('JPY'), step('BHD'), step('USDT'), step()]).to.deep.equal([1000n, 100000n, 100n, 1n, 1n]);
    });
  });
});
