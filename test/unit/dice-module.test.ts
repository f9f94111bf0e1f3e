import { expect } from 'chai';
import { randomBytes, randomInt } from 'node:crypto';
import { deriveDice } from '../../src/shared/domain/dice.js';
import { diceModule } from '../../src/shared/domain/games/dice.js';
import { InvalidBetError } from '../../src/shared/domain/games/types.js';
import { decimalText, fractionText, sideRtp } from '../../src/shared/domain/par-sheet.js';
import { payout } from '../../src/shared/domain/payout.js';
import { buildDiceProof } from '../../src/shared/domain/proof.js';
import { roundHash } from '../../src/shared/domain/seeds.js';
import { DEFAULT_GAME_CONFIG } from '../../src/shared/game/operators/game-config.js';

// Dice as the first game module (D39): a wrapper that gives what the dice derivation, payout
// and par sheet give, with the configuration's defaults and its bet's one parameter.

describe('the dice module (D39)', () => {
  it("dice's defaults are contract 2.12's and D9's, the game configuration's", () => {
    expect(diceModule.config.defaults).to.deep.equal({
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
    expect(DEFAULT_GAME_CONFIG).to.equal(diceModule.config.defaults);
  });

  it('its bet is a side, LOW or HIGH, and nothing else', () => {
    expect(diceModule.bet.parse({ side: 'HIGH' })).to.deep.equal({ side: 'HIGH' });
    for (const input of [{}, { side: 'low' }, { side: 'HIGH', autoCashOut: '2.00' }]) {
      expect(() => diceModule.bet.parse(input), JSON.stringify(input)).to.throw(InvalidBetError);
    }
  });

});

describe('dice as a module gives what the dice functions give (D39)', () => {
  it('derives, settles, proves and rates as deriveDice, payout, buildDiceProof and sideRtp over 2000 random rounds and configs', () => {
    for (let i = 0; i < 2000; i++) {
      const round = { serverSeed: randomBytes(32).toString('hex'), clientSeed: randomBytes(16).toString('hex'), nonce: randomInt(0, 2 ** 31 - 1) };
      const config = diceModule.config.parse({
        lowWeight: String(randomInt(0, 5)),
        highWeight: String(randomInt(1, 5)),
        commissionMicro: String(randomInt(0, 100001)),
        payoutMultiplier: `${randomInt(1, 10)}.${randomInt(0, 100000)}`,
      });
      const bet = diceModule.bet.parse({ side: i % 2 ? 'LOW' : 'HIGH' });
      const stakeMicro = BigInt(randomInt(1, 2 ** 40));

      const outcome = diceModule.derive(roundHash(round), config);
      expect(outcome).to.deep.equal(deriveDice({ ...round, lowWeight: config.lowWeight, highWeight: config.highWeight }));

      const won = bet.side === outcome.side;
      const net = payout({ stakeMicro, multiplierScaled: config.payoutMultiplierScaled, commissionMicro: config.commissionMicro }).netMicro;
      expect(diceModule.settle(stakeMicro, bet, outcome, config)).to.deep.equal({ won, payoutMicro: won ? net : 0n });

      const proof = buildDiceProof({
        ...round,
        roundId: 'r',
        gameCode: 'dice',
        sessionId: 's',
        serverSeedHash: 'h',
        lowWeight: config.lowWeight,
        highWeight: config.highWeight,
        diceValues: outcome.diceValues,
        outcomeSum: outcome.outcomeSum,
        outcomeSide: outcome.side,
      });
      expect(diceModule.proofOutcome(outcome)).to.deep.equal(proof.outcome);

      const fraction = sideRtp(config, bet.side);
      expect(diceModule.rtp(config, bet)).to.deep.equal({ ...fraction, fraction: fractionText(fraction), decimal: decimalText(fraction) });
    }
  });

  it('its largest multiplier is the payout multiplier net of commission, exact', () => {
    expect(diceModule.maxMultiplier(diceModule.config.defaults)).to.equal('1.94');
    expect(diceModule.maxMultiplier(diceModule.config.parse({ payoutMultiplier: '10', commissionMicro: '0' }))).to.equal('10');
    // 1.23457 * 0.96667 = 1.1934217819 (123457 * 96667 = 11934217819)
    expect(diceModule.maxMultiplier(diceModule.config.parse({ payoutMultiplier: '1.23457', commissionMicro: '3333' }))).to.equal('1.1934217819');
  });
});

describe("dice's par sheet with payouts rounded to the minor unit (D46)", () => {
  it('counts the net payout of the stake as paid: 1.01001 at 2x less 3% pays 1.95942, booked 1.95', () => {
    const config = diceModule.config.defaults;
    // LOW wins half the time: 195000 / (2 * 101001)
    expect(diceModule.rtp(config, { side: 'LOW' }, 101001n, 1000n)).to.include({ numerator: 32500n, denominator: 33667n });
    // exact payouts: the net payout to the micro-unit, 195942 / (2 * 101001)
    expect(diceModule.rtp(config, { side: 'LOW' }, 101001n, 1n)).to.include({ numerator: 32657n, denominator: 33667n });
    // without a unit, the nominal return
    expect(diceModule.rtp(config, { side: 'LOW' }, 101000n)).to.include({ numerator: 97n, denominator: 100n });
  });
});
