import { expect } from 'chai';
import { expectedRunSeconds, IDLE_MEASURE_MS, parseOptions, UsageError } from '../../../bench/options.js';

// `npm run bench` options: the defaults a plain run measures, and the refusals that
// keep a mistyped run from measuring something else.

describe('bench options', () => {
  it('staggers the engines by default; --engine-starts aligned runs them in step; anything else is refused', () => {
    expect(parseOptions([], '/r').engineStarts).to.equal('staggered');
    expect(parseOptions(['--engine-starts', 'aligned'], '/r').engineStarts).to.equal('aligned');
    expect(() => parseOptions(['--engine-starts=random'], '/r')).to.throw(UsageError, '--engine-starts must be aligned or staggered (got random)');
  });

  it('traces the service GC only into a service log', () => {
    expect(parseOptions([], '/r').traceGc).to.equal(false);
    expect(parseOptions(['--trace-gc', '--service-log', '/tmp/logs'], '/r')).to.include({ traceGc: true, serviceLogDir: '/tmp/logs' });
    expect(() => parseOptions(['--trace-gc'], '/r')).to.throw(UsageError, '--trace-gc needs --service-log DIR');
  });

  it('traces the bets only when asked, into the directory given', () => {
    expect(parseOptions([], '/r').traceBetsDir).to.equal(undefined);
    expect(parseOptions(['--trace-bets', '/tmp/steps'], '/r').traceBetsDir).to.equal('/tmp/steps');
    expect(() => parseOptions(['--trace-bets'], '/r')).to.throw(UsageError, '--trace-bets needs a value');
  });

  it('runs the bet path skeleton only when asked', () => {
    expect(parseOptions([], '/r').skeleton).to.equal(false);
    expect(parseOptions(['--skeleton'], '/r').skeleton).to.equal(true);
  });

  it('seeds no history unless asked; --history-rebuild only with --history', () => {
    expect(parseOptions([], '/r')).to.include({ history: 0, historyRebuild: false });
    expect(parseOptions(['--history', '10000000'], '/r')).to.include({ history: 10_000_000, historyRebuild: false });
    expect(parseOptions(['--smoke', '--history', '2000', '--history-rebuild'], '/r')).to.include({ history: 2000, historyRebuild: true });
    expect(() => parseOptions(['--history', '1e7'], '/r')).to.throw(UsageError, '--history must be an integer from 0 to 100000000 (got 1e7)');
    expect(() => parseOptions(['--history-rebuild'], '/r')).to.throw(UsageError, '--history-rebuild needs --history N');
  });

  it('--overload doubles the players, given or default, and bounds the doubled run like any other', () => {
    // one moment for both: the default results file is named after it
    const now = new Date();
    const plain = parseOptions([], '/r', now);
    const overloaded = parseOptions(['--overload'], '/r', now);
    expect(plain.overload).to.equal(false);
    expect(overloaded).to.include({ overload: true, players: 4000 });
    // nothing else changes: the operators follow the session rate, as without it
    const { overload: _a, players: _b, ...rest } = overloaded;
    const { overload: _c, players: _d, ...plainRest } = plain;
    expect(rest).to.deep.equal(plainRest);
    expect(expectedRunSeconds(overloaded)).to.be.within(95, 105);
    expect(parseOptions(['--players', '300', '--session-rate', '50', '--overload'], '/r')).to.include({ players: 600, operators: 13 });
    expect(parseOptions(['--smoke', '--overload'], '/r')).to.include({ players: 12, operators: 2 });
    // fewer players than operators: as many operators as the doubled players
    expect(parseOptions(['--players', '1', '--session-rate', '5'], '/r')).to.include({ players: 1, operators: 1 });
    expect(parseOptions(['--players', '1', '--session-rate', '5', '--overload'], '/r')).to.include({ players: 2, operators: 2 });
    expect(() => parseOptions(['--players', '10001', '--session-rate', '2000', '--overload'], '/r')).to.throw(
      UsageError,
      '--overload doubles --players 10001 to 20002; at most 20000 players',
    );
    expect(() => parseOptions(['--players', '3000', '--overload'], '/r')).to.throw(UsageError, 'keep it within 115 s');
  });

  it('counts the idle window in every run, a smoke run included', () => {
    const smoke = parseOptions(['--smoke'], '/r');
    expect(expectedRunSeconds(smoke)).to.equal(20 + IDLE_MEASURE_MS / 1000 + (2 * 6) / 6 + 3 + 3.5 * 1.5);
  });

  it('plays dice unless --game crash; a crash run aims at 2.00 at most, lower in a smoke run, which bets for a cycle and a second', () => {
    expect(parseOptions([], '/r')).to.include({ game: 'dice' });
    // the shape is dice's: the players, operators, rate, window and duration
    const { game: _g, cashOutMaxCents: _c, out: _o, ...crashShape } = parseOptions(['--game', 'crash'], '/r');
    const { game: _h, cashOutMaxCents: _d, out: _p, ...diceShape } = parseOptions([], '/r');
    expect(crashShape).to.deep.equal(diceShape);
    expect(parseOptions(['--game', 'crash'], '/r')).to.include({ game: 'crash', cashOutMaxCents: 200, durationS: 30, players: 2000, operators: 50 });
    expect(parseOptions(['--game', 'crash', '--cash-out-max', '1.50'], '/r').cashOutMaxCents).to.equal(150);
    // 1.30x is 4373 ms into the flight: a 5.6 s cycle
    expect(parseOptions(['--smoke', '--game', 'crash'], '/r')).to.include({ cashOutMaxCents: 130, durationS: 7, players: 6, operators: 2 });
    expect(parseOptions(['--smoke', '--game', 'crash', '--duration', '4'], '/r').durationS).to.equal(4);
    expect(parseOptions(['--smoke'], '/r').durationS).to.equal(3);
    expect(() => parseOptions(['--game', 'slots'], '/r')).to.throw(UsageError, '--game must be dice, crash or gems (got slots)');
    expect(() => parseOptions(['--cash-out-max', '2.00'], '/r')).to.throw(UsageError, '--cash-out-max is a crash option');
    expect(() => parseOptions(['--game', 'crash', '--cash-out-max', '2'], '/r')).to.throw(UsageError, '--cash-out-max must be a multiplier with two decimals, 1.06 to 10.00 (got 2)');
  });

  it('plays Gem Vault with --game gems: dice\'s shape, minRoundMs 1000 unless --min-round, no feature bought unless --feature-buy-share (D41)', () => {
    const { game: _g, out: _o, ...gemsShape } = parseOptions(['--game', 'gems'], '/r');
    const { game: _h, out: _p, ...diceShape } = parseOptions([], '/r');
    expect(gemsShape).to.deep.equal(diceShape);
    expect(parseOptions(['--game', 'gems'], '/r')).to.include({ game: 'gems', minRoundMs: 1000, featureBuyShare: 0, players: 2000, betSpread: 0.4 });
    expect(parseOptions(['--game', 'gems', '--min-round', '500', '--feature-buy-share', '0.25', '--bet-spread', '100'], '/r')).to.include({
      minRoundMs: 500,
      featureBuyShare: 0.25,
      betSpread: 1,
    });
    expect(parseOptions(['--game', 'gems', '--feature-buy-share', '1'], '/r').featureBuyShare).to.equal(1);
    expect(() => parseOptions(['--min-round', '500'], '/r')).to.throw(UsageError, '--min-round is a gems option');
    expect(() => parseOptions(['--game', 'crash', '--feature-buy-share', '0.5'], '/r')).to.throw(UsageError, '--feature-buy-share is a gems option');
    expect(() => parseOptions(['--game', 'gems', '--feature-buy-share', '1.5'], '/r')).to.throw(UsageError, '--feature-buy-share must be a number from 0 to 1 (got 1.5)');
    expect(() => parseOptions(['--game', 'gems', '--feature-buy-share', '-0.1'], '/r')).to.throw(UsageError, '--feature-buy-share must be a number');
    expect(() => parseOptions(['--game', 'gems', '--min-round', '50'], '/r')).to.throw(UsageError, '--min-round must be an integer from 100 to 5000');
    expect(() => parseOptions(['--bet-spread', '100'], '/r')).to.throw(UsageError, '--bet-spread must be an integer from 1 to 90');
    // a player's cycle is minRoundMs: 25 s + 20 s of arrivals + 30 s + 3.5 s
    expect(expectedRunSeconds(parseOptions(['--game', 'gems'], '/r'))).to.equal(78.5);
  });

  it('counts a crash run by its flights: the default within two minutes, a longer flight refused', () => {
    // 25 s + 20 s of arrivals + 30 s of betting + 2.5 cycles of 12.75 s
    expect(expectedRunSeconds(parseOptions(['--game', 'crash'], '/r'))).to.be.within(100, 110);
    expect(() => parseOptions(['--game', 'crash', '--cash-out-max', '3.00'], '/r')).to.throw(UsageError, 'the flight to 3.00');
    expect(parseOptions(['--game', 'crash', '--cash-out-max', '3.00', '--duration', '20'], '/r').cashOutMaxCents).to.equal(300);
  });

  it('keeps a run within two minutes, long betting windows included, and an operator within its session limit', () => {
    expect(expectedRunSeconds(parseOptions([], '/r'))).to.be.within(75, 85);
    expect(() => parseOptions(['--players', '20000', '--session-rate', '200'], '/r')).to.throw(UsageError, 'keep it within 115 s');
    // 15.5 s cycles: the warm-up's, the staggered starts' and the last rounds' count
    expect(parseOptions(['--betting-window', '15000', '--duration', '15'], '/r').durationS).to.equal(15);
    expect(() => parseOptions(['--betting-window', '15000', '--duration', '20'], '/r')).to.throw(UsageError, 'this run would take about 120 s (25 s + ');
    expect(() => parseOptions(['--session-rate', '200', '--operators', '10'], '/r')).to.throw(UsageError, '200 sessions/s needs at least 40 operators');
  });
});
