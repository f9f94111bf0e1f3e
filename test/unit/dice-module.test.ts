import { expect } from 'chai';
import { randomBytes, randomInt } from 'node:crypto';
import { deriveDice } from '../../src/shared/domain/dice.js';
import { crashModule } from '../../src/shared/domain/games/crash.js';
import { diceModule } from '../../src/shared/domain/games/dice.js';
import { InvalidBetError, type RoundRecord } from '../../src/shared/domain/games/types.js';
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

// D39, D1: what the engine and settlement ask of dice to roll a round and price it again from
// its record (rounds/settle.ts), instead of naming its columns and its message
describe('a rolled dice round (D39, D1)', () => {
  // a round in ROLLING as its record holds it: its bet on LOW, its weight snapshot, no outcome
  const rolling: RoundRecord = {
    state: 'ROLLING',
    side: 'LOW',
    autoCashOutCents: null,
    outcomeSide: null,
    outcomeSum: null,
    diceValues: [],
    lowWeight: 1n,
    highWeight: 1n,
    crashCents: null,
    cashOutCents: null,
    cashOutMs: null,
    outcome: null,
    featureBuy: false,
  };
  const { roll } = diceModule;

  it('reads back from its columns the outcome it derived, which settles, proves and tells as the derived one', () => {
    for (let i = 0; i < 500; i++) {
      const config = diceModule.config.parse({ lowWeight: String(randomInt(0, 5)), highWeight: String(randomInt(1, 5)) });
      const record: RoundRecord = { ...rolling, side: i % 2 ? 'LOW' : 'HIGH', lowWeight: config.lowWeight, highWeight: config.highWeight };
      const outcome = diceModule.derive(randomBytes(32), roll.config(config, record));
      const columns = roll.columns(outcome);
      expect(columns).to.deep.equal({ outcomeSide: outcome.side, outcomeSum: outcome.outcomeSum, diceValues: outcome.diceValues });
      const stored = { ...record, ...columns, state: 'RESULT' as const };
      const read = roll.outcome(stored);
      expect(read).to.deep.equal({ side: outcome.side, outcomeSum: outcome.outcomeSum, diceValues: outcome.diceValues });
      // what the reads of the round make of the same columns (D39)
      expect(diceModule.rounds.recorded(stored)).to.equal(true);
      expect(diceModule.rounds.won(stored)).to.equal(record.side === outcome.side);
      const bet = roll.bet(stored);
      expect(diceModule.settle(1_000_000n, bet, read, config)).to.deep.equal(diceModule.settle(1_000_000n, bet, outcome, config));
      expect(diceModule.proofOutcome(read)).to.deep.equal(diceModule.proofOutcome(outcome));
      const common = { roundId: 'r', cycleId: 'c', nonce: i, betId: 'b', won: true, payoutMicro: '1' };
      expect(roll.result(common, read, stored)).to.deep.equal(roll.result(common, outcome, stored));
    }
  });

  it("keeps its bet in the bets table's side column, crash's in its auto cash-out column, each reading back as the bet (D39)", () => {
    expect(diceModule.bet.columns(diceModule.bet.parse({ side: 'HIGH' }))).to.deep.equal({ side: 'HIGH', autoCashOutCents: null });
    expect(roll.bet({ ...rolling, ...diceModule.bet.columns({ side: 'HIGH' }) })).to.deep.equal({ side: 'HIGH' });
    expect(crashModule.bet.columns(crashModule.bet.parse({ autoCashOut: '2.37' }, crashModule.config.defaults))).to.deep.equal({ side: null, autoCashOutCents: 237n });
    expect(crashModule.bet.columns(crashModule.bet.parse({}, crashModule.config.defaults))).to.deep.equal({ side: null, autoCashOutCents: null });
    expect(crashModule.rounds.betParams({ ...rolling, side: null, autoCashOutCents: 237n })).to.deep.equal({ autoCashOut: '2.37' });
  });

  it("reads the bet's side from its column, as bet.parse reads it, and refuses a corrupt row", () => {
    for (const side of ['LOW', 'HIGH'] as const) expect(roll.bet({ ...rolling, side })).to.deep.equal(diceModule.bet.parse({ side }));
    for (const side of [null, 'low', 'MIDDLE']) expect(() => roll.bet({ ...rolling, side }), String(side)).to.throw(/LOW or HIGH/);
  });

  it('has no outcome to read before one is written', () => {
    expect(() => roll.outcome(rolling)).to.throw(/side and a sum/);
    expect(() => roll.outcome({ ...rolling, outcomeSide: 'SIDEWAYS', outcomeSum: 3 })).to.throw(/side and a sum/);
    expect(() => roll.outcome({ ...rolling, outcomeSide: 'LOW', outcomeSum: null })).to.throw(/side and a sum/);
  });

  it("plays a round under its own weight snapshot (D19), with the rest of the cycle's configuration", () => {
    const cycle = diceModule.config.parse({ payoutMultiplier: '1.98', commissionMicro: '0' });
    expect(roll.config(cycle, { ...rolling, lowWeight: 3n, highWeight: 1n })).to.deep.equal({ ...cycle, lowWeight: 3n, highWeight: 1n });
  });

  it('tells round_result with the fields and in the order dice always has (D4, D19), for a known h', () => {
    // player-seed:1 (test/unit/dice.test.ts): HIGH face 5 at weights 1:1, LOW face 2 at 3:1
    const h = Buffer.from('8c989d1a330b61229bc786eeb76d9ed8dab05797d972210c26d81e36b8171314', 'hex');
    const record = { ...rolling, lowWeight: 3n, highWeight: 1n };
    const config = roll.config(diceModule.config.defaults, record);
    const outcome = diceModule.derive(h, config);
    const { won, payoutMicro } = diceModule.settle(1_000_000n, roll.bet(record), outcome, config);
    const message = roll.result({ roundId: 'r1', cycleId: 'c1', nonce: 1, betId: 'b1', won, payoutMicro: payoutMicro.toString() }, outcome, record);
    expect(JSON.stringify(message)).to.equal(
      '{"roundId":"r1","cycleId":"c1","nonce":1,"side":"LOW","sum":2,"diceValues":[2],"betId":"b1","won":true,"payoutMicro":"1940000","lowWeight":"3","highWeight":"1"}',
    );
    // the cycle's weights, 1:1, would have rolled HIGH: the round's own are the source
    expect(diceModule.derive(h, diceModule.config.defaults)).to.include({ side: 'HIGH', outcomeSum: 5 });
  });
});
