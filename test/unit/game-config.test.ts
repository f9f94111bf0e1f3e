import { expect } from 'chai';
import {
  DEFAULT_GAME_CONFIG,
  GameConfigError,
  checkGameConfig,
  formatMultiplier,
  parseMultiplier,
  type GameConfigValues,
} from '../../src/shared/game/operators/game-config.js';

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

  describe('checkGameConfig', () => {
    const withChanges = (changes: Partial<GameConfigValues>): GameConfigValues => ({ ...DEFAULT_GAME_CONFIG, ...changes });

    const accepted: [string, Partial<GameConfigValues>][] = [
      ['the defaults', {}],
      ['min equal to max', { minBetMicro: 500n, maxBetMicro: 500n }],
      ['cooldown 0', { cooldownMs: 0 }],
      ['commission 0', { commissionMicro: 0n }],
      ['commission 100%', { commissionMicro: 100000n }],
      ['one weight zero', { lowWeight: 0n, highWeight: 5n }],
      ['the other weight zero', { lowWeight: 3n, highWeight: 0n }],
      ['min bet of 1 micro', { minBetMicro: 1n }],
    ];
    for (const [name, changes] of accepted) {
      it(`accepts ${name}`, () => {
        expect(() => checkGameConfig(withChanges(changes))).not.to.throw();
      });
    }

    const refused: [string, Partial<GameConfigValues>, RegExp][] = [
      ['min above max', { minBetMicro: 1000n, maxBetMicro: 999n }, /max bet/],
      ['min bet 0', { minBetMicro: 0n }, /min bet/],
      ['negative min bet', { minBetMicro: -1n, maxBetMicro: 10n }, /min bet/],
      ['betting window 0', { bettingWindowMs: 0 }, /windows/],
      ['rolling window 0', { rollingWindowMs: 0 }, /windows/],
      ['negative cooldown', { cooldownMs: -1 }, /windows/],
      ['commission above 100%', { commissionMicro: 100001n }, /commission/],
      ['negative commission', { commissionMicro: -1n }, /commission/],
      ['both weights zero', { lowWeight: 0n, highWeight: 0n }, /weights/],
      ['negative weight', { lowWeight: -1n, highWeight: 2n }, /weights/],
    ];
    for (const [name, changes, message] of refused) {
      it(`refuses ${name}`, () => {
        expect(() => checkGameConfig(withChanges(changes))).to.throw(GameConfigError, message);
      });
    }

    it('names every problem at once', () => {
      expect(() => checkGameConfig(withChanges({ minBetMicro: 0n, commissionMicro: 200000n, lowWeight: 0n, highWeight: 0n })))
        .to.throw(GameConfigError)
        .with.property('message')
        .that.matches(/min bet/)
        .and.matches(/commission/)
        .and.matches(/weights/);
    });
  });
});
