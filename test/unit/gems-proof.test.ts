import { expect } from 'chai';
import type { DrawTable } from '../../src/shared/domain/draws.js';
import { GEMS_MATH, deriveGems, gemsRtp, playGems, type GemSymbol, type GemsOutcome } from '../../src/shared/domain/games/gems-math.js';
import {
  buildGemsProof,
  gemsBookedPayout,
  gemsOutcomeJson,
  gemsOutcomeOf,
  gemsPackChecks,
  gemsPackParSheet,
  gemsProofOutcome,
  verifyGemsProof,
  type GemsProof,
  type GemsProofInput,
} from '../../src/shared/domain/games/gems-proof.js';
import { SEED_NOT_REVEALED, type PackFacts } from '../../src/shared/domain/pack-checks.js';
import type { ProofVerdict } from '../../src/shared/domain/proof.js';
import { serverSeedHash } from '../../src/shared/domain/seeds.js';

// Gem Vault's proof (contract 2.11 MULTI, D41): built from deriveGems it verifies; every part a
// verifier re-derives, tampered with, fails its named check; a jackpot round, a bought feature,
// payoutRounding and free bets book as settlement does (D46, D42); any body gets a verdict
// (D24); the stored outcome round-trips exactly and a corrupt one is an error; the dispute
// pack's par sheet and checks (D32).

const SEED = '1c27fcee55035c1c8c5b0514d102bbfbf16f7eafa981cb8523c654bd16747f6f';
const SEED_HASH = 'bb49e4ba664572a73dad36d55a287328da63c9ffa8bd260658e3c982461e3466';
const ROUND_ID = '6f1c1f4e-2b7d-4c57-9a43-0d3f3f9f7c11';
const SESSION_ID = '0b0a6a52-8f7c-4b0e-a4f5-1d8e5a0f2c3d';
const STAKE = 100_000n; // 1.00
// client seed `player-seed` (gems.md's example): nonce 1 wins nothing, nonce 2 one line, nonce
// 39 three Vaults and the feature
const LOSS = 1;
const LINE = 2;
const FEATURE = 39;
// found by searching the nonces of this seed and client seed for draw 0 below 859 (a jackpot is
// about 1 in 5 million): a base spin that wins nothing, and the jackpot
const JACKPOT = { clientSeed: 'jackpot-b', nonce: 670175 };
const POOL = 987_654_321n;

type Play = { clientSeed?: string; nonce: number; stakeMicro?: bigint; featureBuy?: boolean; jackpotPoolMicro?: bigint };
type Terms = Partial<Pick<GemsProofInput, 'payoutRounding' | 'currency' | 'isFree'>>;

function played({ clientSeed = 'player-seed', nonce, stakeMicro = STAKE, featureBuy = false, jackpotPoolMicro = 0n }: Play): GemsOutcome {
  return deriveGems({ serverSeed: SEED, clientSeed, nonce, stakeMicro, featureBuy, jackpotPoolMicro });
}

// the proof a service would build: the outcome as played, its payout as settlement books it
function proof(play: Play, { payoutRounding = 'exact', currency = 'EUR', isFree = false }: Terms = {}): GemsProof {
  const outcome = played(play);
  return buildGemsProof({
    roundId: ROUND_ID,
    gameCode: 'gems',
    sessionId: SESSION_ID,
    serverSeed: SEED,
    serverSeedHash: SEED_HASH,
    clientSeed: play.clientSeed ?? 'player-seed',
    nonce: play.nonce,
    currency,
    stakeMicro: play.stakeMicro ?? STAKE,
    payoutMicro: gemsBookedPayout(outcome, payoutRounding, currency, isFree, play.stakeMicro ?? STAKE),
    jackpotRateMicro: 5000n,
    payoutRounding,
    isFree,
    outcome,
  });
}

// the proof as a verifier receives it: JSON text, parsed (a fresh copy to tamper with)
const wire = (p: GemsProof): Record<string, any> => JSON.parse(JSON.stringify(p));

const failing = (verdict: ProofVerdict<unknown>) => verdict.checks.filter((check) => !check.ok).map((check) => check.name);

describe('gems proof (contract 2.11 MULTI, D41)', () => {
  it('builds the 2.11 body with the MULTI outcome and the terms that re-derive and book it, amounts as strings', () => {
    const body = wire(proof({ nonce: LINE }));
    expect(body).to.deep.equal({
      roundId: ROUND_ID,
      gameCode: 'gems',
      rngVersion: 'gems-hmac-sha256-v1',
      mathVersion: 'gems-1.0.0',
      serverSeed: SEED,
      serverSeedHash: SEED_HASH,
      clientSeed: 'player-seed',
      nonce: LINE,
      outcome: {
        type: 'MULTI',
        baseGame: body.outcome.baseGame,
        events: [{ type: 'LINE_WIN', subOutcome: body.outcome.events[0].subOutcome, payoutMicro: '100000' }],
        featurePurchased: false,
        jackpotContributionMicro: '500',
      },
      stakeMicro: '100000',
      jackpotPoolMicro: null,
      payoutMicro: '100000',
      payoutRounding: 'exact',
      jackpotRateMicro: '5000',
      currency: 'EUR',
      isFree: false,
      sessionId: SESSION_ID,
    });
    expect(body.outcome.baseGame).to.have.all.keys('stops', 'grid');
    expect(body.outcome.events[0].subOutcome).to.have.all.keys('line', 'symbol', 'tenths');
  });

  it('computes the contribution with the configured jackpotRateMicro, and a changed rate fails jackpot_contribution (D41)', () => {
    const outcome = deriveGems({ serverSeed: SEED, clientSeed: 'player-seed', nonce: LINE, stakeMicro: STAKE, featureBuy: false, jackpotPoolMicro: 0n, jackpotRateMicro: 12_000n });
    expect(outcome.jackpotContributionMicro).to.equal((STAKE * 12_000n) / 1_000_000n);
    const body = buildGemsProof({
      roundId: ROUND_ID,
      gameCode: 'gems',
      sessionId: SESSION_ID,
      serverSeed: SEED,
      serverSeedHash: SEED_HASH,
      clientSeed: 'player-seed',
      nonce: LINE,
      currency: 'EUR',
      stakeMicro: STAKE,
      payoutMicro: gemsBookedPayout(outcome, 'exact', 'EUR', false, STAKE),
      jackpotRateMicro: 12_000n,
      payoutRounding: 'exact',
      isFree: false,
      outcome,
    });
    expect(verifyGemsProof(wire(body)).valid).to.equal(true);
    expect(failing(verifyGemsProof({ ...wire(body), jackpotRateMicro: '5000' }))).to.deep.equal(['jackpot_contribution']);
  });

  it('docs/games/gems.md\'s example proof is the one built, and verifies', async () => {
    const { readFileSync } = await import('node:fs');
    const page = readFileSync(new URL('../../docs/games/gems.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('## Verifying a round'));
    const example = /```json\n([\s\S]*?)\n```/.exec(section);
    expect(example, 'the section has a JSON example').to.not.equal(null);
    const body = JSON.parse(example![1]!);
    expect(body).to.deep.equal(wire(proof({ nonce: LINE })));
    expect(failing(verifyGemsProof(body))).to.deep.equal([]);
  });

  it('a proof built from deriveGems verifies, every check passing, and shows the derivation', () => {
    const verdict = verifyGemsProof(wire(proof({ nonce: FEATURE })));
    expect(failing(verdict)).to.deep.equal([]);
    expect(verdict.valid).to.equal(true);
    const names = verdict.checks.map((check) => check.name);
    expect(names.slice(0, 7)).to.deep.equal(['shape', 'outcome_type', 'rng_version', 'math_version', 'server_seed_hash', 'base_game', 'event_count']);
    // the trigger and 8 free spins
    expect(names.filter((name) => /^event_[0-9]+$/.test(name))).to.have.length(9);
    expect(names.slice(-3)).to.deep.equal(['jackpot_contribution', 'jackpot_pool', 'payout']);
    expect(verdict.derived).to.include({ serverSeedHash: SEED_HASH, costMicro: '100000', payoutMicro: '4950000', draws: 29, capped: false });
    expect(verdict.derived!.outcome).to.deep.equal(gemsProofOutcome(played({ nonce: FEATURE })));
  });

  it('the nonces 0 to 59 of a session each verify (losses, line wins, the feature)', () => {
    for (let nonce = 0; nonce < 60; nonce++) expect(failing(verifyGemsProof(wire(proof({ nonce })))), `nonce ${nonce}`).to.deep.equal([]);
  });

  it('a bought feature: no base spin, the feature\'s price debited, its contribution 67 times a base play\'s', () => {
    const body = wire(proof({ nonce: 3, featureBuy: true }));
    expect(body.outcome.baseGame).to.equal(null);
    expect(body.outcome.featurePurchased).to.equal(true);
    expect(body.outcome.events[0].type).to.equal('FEATURE_TRIGGER');
    expect(body.outcome.events[0].subOutcome).to.include({ purchased: true, scatters: null, tenths: 0 });
    expect(body.outcome.jackpotContributionMicro).to.equal(((STAKE * 67n * 500n) / 100000n).toString());
    const verdict = verifyGemsProof(body);
    expect(failing(verdict)).to.deep.equal([]);
    expect(verdict.derived!.costMicro).to.equal((STAKE * 67n).toString());
  });

  it('a jackpot round: the pool the play was given is stated, paid by the JACKPOT event, and verifies', () => {
    const body = wire(proof({ ...JACKPOT, jackpotPoolMicro: POOL }));
    expect(body.jackpotPoolMicro).to.equal(POOL.toString());
    expect(body.outcome.events.at(-1)).to.deep.equal({ type: 'JACKPOT', subOutcome: { poolMicro: POOL.toString() }, payoutMicro: POOL.toString() });
    expect(body.payoutMicro).to.equal(POOL.toString());
    expect(failing(verifyGemsProof(body))).to.deep.equal([]);
    // the jackpot's draw is draw 0 of any play: a bought feature on the same nonce hits it too
    expect(failing(verifyGemsProof(wire(proof({ ...JACKPOT, featureBuy: true, jackpotPoolMicro: POOL }))))).to.deep.equal([]);
    // an empty pool: the jackpot hits and pays 0, and the proof still states the pool
    const empty = wire(proof({ ...JACKPOT, jackpotPoolMicro: 0n }));
    expect(empty.jackpotPoolMicro).to.equal('0');
    expect(failing(verifyGemsProof(empty))).to.deep.equal([]);
  });

  it('books the events\' sum rounded as payoutRounding says in the currency (D46), and a free bet its net (D42)', () => {
    // a stake of 1.23457: the line win pays 1.23457, EUR rounds it down to 1.23
    const stakeMicro = 123_457n;
    const exact = wire(proof({ nonce: LINE, stakeMicro }));
    expect(exact.payoutMicro).to.equal('123457');
    const rounded = wire(proof({ nonce: LINE, stakeMicro }, { payoutRounding: 'minor_unit' }));
    expect(rounded.payoutMicro).to.equal('123000');
    expect(failing(verifyGemsProof(rounded))).to.deep.equal([]);
    // the payout of the other rounding fails
    expect(failing(verifyGemsProof({ ...rounded, payoutMicro: '123457' }))).to.deep.equal(['payout']);
    expect(failing(verifyGemsProof({ ...rounded, payoutRounding: 'exact' }))).to.deep.equal(['payout']);
    // JPY has no minor digits: the unit is 1 yen, 100000 micro-units (49.5 x 1.23457 = 61.111215)
    expect(wire(proof({ nonce: FEATURE, stakeMicro }, { payoutRounding: 'minor_unit', currency: 'JPY' })).payoutMicro).to.equal('6100000');

    // a free bet books max(payout - stake, 0): the feature's 49.5 x stake less the stake; a line win of 1 x stake, 0
    const free = wire(proof({ nonce: FEATURE }, { isFree: true }));
    expect(free.payoutMicro).to.equal((4_950_000n - STAKE).toString());
    expect(failing(verifyGemsProof(free))).to.deep.equal([]);
    expect(wire(proof({ nonce: LINE }, { isFree: true })).payoutMicro).to.equal('0');
    expect(failing(verifyGemsProof({ ...free, isFree: false }))).to.deep.equal(['payout']);
  });

  describe('tampered with, the named check fails', () => {
    const cases: [string, () => Record<string, any>, string[]][] = [
      [
        'an event\'s payout',
        () => {
          const body = wire(proof({ nonce: FEATURE }));
          body.outcome.events[2].payoutMicro = '2500001';
          return body;
        },
        ['event_2'],
      ],
      [
        'an event\'s subOutcome (a free spin\'s stop)',
        () => {
          const body = wire(proof({ nonce: FEATURE }));
          body.outcome.events[3].subOutcome.stops[0] = (body.outcome.events[3].subOutcome.stops[0] + 1) % 32;
          return body;
        },
        ['event_3'],
      ],
      [
        'an event\'s subOutcome (the multiplier)',
        () => {
          const body = wire(proof({ nonce: FEATURE }));
          body.outcome.events[0].subOutcome.multiplier = 10;
          return body;
        },
        ['event_0'],
      ],
      [
        'a line win\'s symbol',
        () => {
          const body = wire(proof({ nonce: LINE }));
          body.outcome.events[0].subOutcome.symbol = 'W';
          return body;
        },
        ['event_0'],
      ],
      [
        'an event\'s type',
        () => {
          const body = wire(proof({ nonce: LINE }));
          body.outcome.events[0].type = 'FREE_SPIN';
          return body;
        },
        ['event_0'],
      ],
      [
        'an event added',
        () => {
          const body = wire(proof({ nonce: LINE }));
          body.outcome.events.push(body.outcome.events[0]);
          return body;
        },
        ['event_count'],
      ],
      [
        'an event removed',
        () => {
          const body = wire(proof({ nonce: LINE }));
          body.outcome.events.pop();
          return body;
        },
        ['event_count', 'event_0'],
      ],
      [
        'baseGame\'s grid',
        () => {
          const body = wire(proof({ nonce: LOSS }));
          body.outcome.baseGame.grid[0][0] = 'W';
          return body;
        },
        ['base_game'],
      ],
      [
        'baseGame set to null',
        () => ({ ...wire(proof({ nonce: LOSS })), outcome: { ...wire(proof({ nonce: LOSS })).outcome, baseGame: null } }),
        ['base_game'],
      ],
      [
        'the server seed (its hash then differs too)',
        () => ({ ...wire(proof({ nonce: LINE })), serverSeed: 'a'.repeat(64) }),
        ['server_seed_hash', 'base_game', 'event_count', 'payout'],
      ],
      ['the hash', () => ({ ...wire(proof({ nonce: LINE })), serverSeedHash: serverSeedHash('another seed') }), ['server_seed_hash']],
      ['the client seed', () => ({ ...wire(proof({ nonce: LINE })), clientSeed: 'another-seed' }), ['base_game', 'event_count', 'payout']],
      ['the nonce', () => ({ ...wire(proof({ nonce: LINE })), nonce: LOSS }), ['base_game', 'event_count', 'payout']],
      ['the stake', () => ({ ...wire(proof({ nonce: LINE })), stakeMicro: '200000' }), ['event_0', 'jackpot_contribution', 'payout']],
      ['the stake, on a loss (only the contribution shows it)', () => ({ ...wire(proof({ nonce: LOSS })), stakeMicro: '200000' }), ['jackpot_contribution']],
      [
        'featurePurchased',
        () => {
          const body = wire(proof({ nonce: LINE }));
          body.outcome.featurePurchased = true;
          return body;
        },
        // bought, nonce 2 plays the feature: its trigger and 8 free spins
        ['base_game', 'event_count', ...Array.from({ length: 9 }, (_, i) => `event_${i}`), 'jackpot_contribution', 'payout'],
      ],
      [
        'featurePurchased, of a bought feature',
        () => {
          const body = wire(proof({ nonce: 3, featureBuy: true }));
          body.outcome.featurePurchased = false;
          return body;
        },
        // not bought, nonce 3 is a base spin that wins nothing
        ['base_game', 'event_count', 'jackpot_contribution', 'payout'],
      ],
      ['the jackpot contribution', () => ({ ...wire(proof({ nonce: LINE })), outcome: { ...wire(proof({ nonce: LINE })).outcome, jackpotContributionMicro: '0' } }), ['jackpot_contribution']],
      ['the booked payout', () => ({ ...wire(proof({ nonce: LINE })), payoutMicro: '100001' }), ['payout']],
      ['the jackpot pool of a jackpot round', () => ({ ...wire(proof({ ...JACKPOT, jackpotPoolMicro: POOL })), jackpotPoolMicro: '1' }), ['event_0', 'payout']],
      ['the jackpot pool of a jackpot round, null', () => ({ ...wire(proof({ ...JACKPOT, jackpotPoolMicro: POOL })), jackpotPoolMicro: null }), ['event_0', 'jackpot_pool', 'payout']],
      [
        'the JACKPOT event\'s pool',
        () => {
          const body = wire(proof({ ...JACKPOT, jackpotPoolMicro: POOL }));
          body.outcome.events[0].subOutcome.poolMicro = '1';
          return body;
        },
        ['event_0'],
      ],
      [
        'a JACKPOT event dropped',
        () => {
          const body = wire(proof({ ...JACKPOT, jackpotPoolMicro: POOL }));
          body.outcome.events = [];
          return { ...body, payoutMicro: '0' };
        },
        ['event_count', 'event_0', 'payout'],
      ],
      ['a pool stated when the jackpot missed', () => ({ ...wire(proof({ nonce: LINE })), jackpotPoolMicro: '5' }), ['jackpot_pool']],
      ['the rngVersion', () => ({ ...wire(proof({ nonce: LINE })), rngVersion: 'dice-hmac-sha256-v1' }), ['rng_version']],
      ['the mathVersion', () => ({ ...wire(proof({ nonce: LINE })), mathVersion: 'gems-2.0.0' }), ['math_version']],
    ];
    for (const [label, body, checks] of cases) {
      it(label, () => {
        const verdict = verifyGemsProof(body());
        expect(verdict.valid).to.equal(false);
        expect(failing(verdict)).to.deep.equal(checks);
      });
    }

    it('a failing event check shows the derived event and the stated one', () => {
      const body = wire(proof({ nonce: FEATURE }));
      body.outcome.events[2].payoutMicro = '1';
      const check = verifyGemsProof(body).checks.find((c) => c.name === 'event_2')!;
      expect(check.expected).to.deep.include({ type: 'FREE_SPIN', payoutMicro: '2500000' });
      expect(check.actual).to.deep.include({ type: 'FREE_SPIN', payoutMicro: '1' });
    });

    it('the order of an object\'s keys is not a difference (JSON objects are unordered)', () => {
      const body = wire(proof({ nonce: FEATURE }));
      const spin = body.outcome.events[1].subOutcome;
      body.outcome.events[1].subOutcome = Object.fromEntries(Object.entries(spin).reverse());
      body.outcome = Object.fromEntries(Object.entries(body.outcome).reverse());
      expect(failing(verifyGemsProof(body))).to.deep.equal([]);
    });
  });

  describe('any body gets a verdict, never an exception (D24)', () => {
    const good = () => wire(proof({ nonce: LINE }));
    const cyclic: Record<string, unknown> = good();
    (cyclic.outcome as Record<string, unknown>).baseGame = cyclic;
    const hostile: [string, unknown][] = [
      ['null', null],
      ['undefined', undefined],
      ['a number', 42],
      ['a string', 'proof'],
      ['an array', [good()]],
      ['an empty object', {}],
      ['a huge nonce', { ...good(), nonce: 2 ** 64 }],
      ['a negative nonce', { ...good(), nonce: -1 }],
      ['a nonce as a string', { ...good(), nonce: '2' }],
      ['a huge stake', { ...good(), stakeMicro: '9'.repeat(400) }],
      ['a stake as a number', { ...good(), stakeMicro: 100000 }],
      ['a zero stake', { ...good(), stakeMicro: '0' }],
      ['a negative stake', { ...good(), stakeMicro: '-100000' }],
      ['a fractional stake', { ...good(), stakeMicro: '1.5' }],
      ['a payout as a number', { ...good(), payoutMicro: 100000 }],
      ['a pool as a number', { ...good(), jackpotPoolMicro: 5 }],
      ['a negative pool', { ...good(), jackpotPoolMicro: '-1' }],
      ['no stake', { ...good(), stakeMicro: undefined }],
      ['no serverSeed', { ...good(), serverSeed: undefined }],
      ['a serverSeed as a number', { ...good(), serverSeed: 1 }],
      ['no outcome', { ...good(), outcome: undefined }],
      ['an outcome as an array', { ...good(), outcome: [] }],
      ['another outcome type', { ...good(), outcome: { type: 'DICE', diceValues: [1], outcomeSum: 1, outcomeSide: 'LOW' } }],
      ['events as an object', { ...good(), outcome: { ...good().outcome, events: {} } }],
      ['events of nulls', { ...good(), outcome: { ...good().outcome, events: [null, 1, 'x', [], {}] } }],
      ['a million events', { ...good(), outcome: { ...good().outcome, events: new Array(1_000_000).fill(good().outcome.events[0]) } }],
      ['baseGame as a string', { ...good(), outcome: { ...good().outcome, baseGame: 'grid' } }],
      ['baseGame nested deep', { ...good(), outcome: { ...good().outcome, baseGame: { stops: JSON.parse('['.repeat(5000) + ']'.repeat(5000)), grid: [] } } }],
      ['featurePurchased as a string', { ...good(), outcome: { ...good().outcome, featurePurchased: 'true' } }],
      ['a contribution as a number', { ...good(), outcome: { ...good().outcome, jackpotContributionMicro: 500 } }],
      ['an unknown rounding', { ...good(), payoutRounding: 'nearest' }],
      ['an empty currency', { ...good(), currency: '' }],
      ['isFree as a string', { ...good(), isFree: 'false' }],
      ['a cycle', cyclic],
      [
        'a getter that throws',
        Object.defineProperty(good(), 'serverSeed', {
          enumerable: true,
          get() {
            throw new Error('boom');
          },
        }),
      ],
    ];
    for (const [label, body] of hostile) {
      it(label, () => {
        let verdict: ProofVerdict<unknown> | undefined;
        expect(() => (verdict = verifyGemsProof(body))).to.not.throw();
        expect(verdict!.valid).to.equal(false);
        expect(verdict!.checks.length).to.be.greaterThan(0);
      });
    }

    it('a shape problem names each bad field', () => {
      const verdict = verifyGemsProof({ ...good(), stakeMicro: 100000, jackpotPoolMicro: 5, isFree: 'no' });
      expect(verdict.checks).to.have.length(1);
      expect(verdict.checks[0]!.name).to.equal('shape');
      expect(verdict.checks[0]!.actual).to.deep.equal([
        'stakeMicro must be a positive decimal string (D18)',
        'jackpotPoolMicro must be null or a decimal string (D18)',
        'isFree must be a boolean',
      ]);
    });
  });
});

// ---- the stored form -----------------------------------------------------------------------

// a play from chosen draws (gems-math.test.ts's way): the cap, reached on the first free spin
function cappedPlay(jackpot: boolean): GemsOutcome {
  const [reel0, reel1, reel2] = GEMS_MATH.baseReels as [readonly GemSymbol[], readonly GemSymbol[], readonly GemSymbol[]];
  const vault = (reel: readonly GemSymbol[]) => reel.indexOf('V');
  const choices = new Map([[0, jackpot ? 0 : 1], [1, vault(reel0)], [2, vault(reel1)], [3, vault(reel2)], [4, 4], [5, 0], [6, 0], [7, 0]]);
  const draw = (index: number, table: DrawTable): number => {
    const choice = choices.get(index);
    if (choice === undefined || choice >= table.counts.length) throw new Error(`draw ${index} not expected`);
    return choice;
  };
  return playGems(draw, { stakeMicro: 1_234_567n, featureBuy: false, jackpotPoolMicro: POOL });
}

describe('gems outcome, stored (rounds.outcome, D18)', () => {
  const outcomes = (): [string, GemsOutcome][] => [
    ['a loss', played({ nonce: LOSS })],
    ['a line win', played({ nonce: LINE })],
    ['the feature', played({ nonce: FEATURE })],
    ['a bought feature', played({ nonce: 3, featureBuy: true })],
    ['a jackpot', played({ ...JACKPOT, jackpotPoolMicro: POOL })],
    ['the cap, and the jackpot', cappedPlay(true)],
    ['the cap', cappedPlay(false)],
  ];

  it('every amount is a decimal string, no JSON number carries one', () => {
    const json = gemsOutcomeJson(cappedPlay(true));
    expect(json.costMicro).to.equal('1234567');
    expect(json.payoutMicro).to.equal((5000n * 1_234_567n + POOL).toString());
    expect(json.jackpotContributionMicro).to.be.a('string');
    for (const event of json.events) expect(event.payoutMicro).to.be.a('string');
    expect(json.events.at(-1)).to.deep.equal({ type: 'JACKPOT', subOutcome: { poolMicro: POOL.toString() }, payoutMicro: POOL.toString() });
    expect(json).to.include({ winTenths: 50000, capped: true, draws: 8 });
  });

  for (const [label, outcome] of outcomes()) {
    it(`round-trips exactly through JSON text: ${label}`, () => {
      const text = JSON.stringify(gemsOutcomeJson(outcome));
      const back = gemsOutcomeOf(JSON.parse(text));
      expect(back).to.deep.equal(outcome);
      expect(JSON.stringify(gemsOutcomeJson(back))).to.equal(text);
    });
  }

  it('the nonces 0 to 199, base and bought, round-trip', () => {
    for (let nonce = 0; nonce < 200; nonce++) {
      for (const featureBuy of [false, true]) {
        const outcome = played({ nonce, featureBuy });
        expect(gemsOutcomeOf(JSON.parse(JSON.stringify(gemsOutcomeJson(outcome))))).to.deep.equal(outcome);
      }
    }
  });

  describe('a corrupt row is an error naming the problem', () => {
    const feature = () => JSON.parse(JSON.stringify(gemsOutcomeJson(played({ nonce: FEATURE })))) as Record<string, any>;
    const line = () => JSON.parse(JSON.stringify(gemsOutcomeJson(played({ nonce: LINE })))) as Record<string, any>;
    const bought = () => JSON.parse(JSON.stringify(gemsOutcomeJson(played({ nonce: 3, featureBuy: true })))) as Record<string, any>;
    const jackpot = () => JSON.parse(JSON.stringify(gemsOutcomeJson(played({ ...JACKPOT, jackpotPoolMicro: POOL })))) as Record<string, any>;
    const edit = (make: () => Record<string, any>, change: (o: Record<string, any>) => void) => () => {
      const o = make();
      change(o);
      return o;
    };
    const corrupt: [string, () => unknown, RegExp][] = [
      ['null', () => null, /rounds\.outcome: must be an object/],
      ['an array', () => [], /rounds\.outcome: must be an object/],
      ['a string', () => 'MULTI', /must be an object/],
      ['another type', edit(line, (o) => (o.type = 'DICE')), /\.type: must be MULTI/],
      ['a field more', edit(line, (o) => (o.extra = 1)), /has no field extra/],
      ['a field missing', edit(line, (o) => delete o.draws), /\.draws: is missing/],
      ['a payout as a number', edit(line, (o) => (o.payoutMicro = 100000)), /\.payoutMicro: must be an amount as a decimal string \(D18\)/],
      ['an event\'s payout as a number', edit(line, (o) => (o.events[0].payoutMicro = 100000)), /\.events\[0\]\.payoutMicro: must be an amount/],
      ['a negative amount', edit(line, (o) => (o.costMicro = '-1')), /\.costMicro: must be an amount/],
      ['a leading zero', edit(line, (o) => (o.costMicro = '0100000')), /\.costMicro: must be an amount/],
      ['a zero cost', edit(line, (o) => (o.costMicro = '0')), /\.costMicro: must be positive/],
      ['an unknown event', edit(line, (o) => (o.events[0].type = 'BONUS')), /\.events\[0\]\.type: must be LINE_WIN/],
      ['an event\'s field more', edit(line, (o) => (o.events[0].subOutcome.extra = true)), /\.events\[0\]\.subOutcome: has no field extra/],
      ['a line out of range', edit(line, (o) => (o.events[0].subOutcome.line = 5)), /\.events\[0\]\.subOutcome\.line: must be an integer, 0 to 4/],
      ['an unknown symbol', edit(line, (o) => (o.events[0].subOutcome.symbol = 'X')), /\.symbol: must be a symbol/],
      ['fractional tenths', edit(line, (o) => (o.events[0].subOutcome.tenths = 1.5)), /\.tenths: must be an integer/],
      ['a stop out of range', edit(line, (o) => (o.baseGame.stops[0] = 32)), /\.baseGame\.stops\[0\]: must be an integer, 0 to 31/],
      ['a grid its stops do not show', edit(line, (o) => (o.baseGame.grid[0][0] = o.baseGame.grid[0][0] === 'W' ? 'D' : 'W')), /\.baseGame\.grid: must be the grid its stops show/],
      ['a free spin\'s grid', edit(feature, (o) => (o.events[1].subOutcome.grid = [])), /\.events\[1\]\.subOutcome\.grid: must be the grid/],
      ['a free spin\'s lineWins', edit(feature, (o) => (o.events[1].subOutcome.lineWins = null)), /\.events\[1\]\.subOutcome\.lineWins: must be an array/],
      ['a trigger\'s purchased', edit(feature, (o) => (o.events[0].subOutcome.purchased = 'no')), /\.purchased: must be a boolean/],
      ['a base game on a bought feature', edit(bought, (o) => (o.baseGame = { stops: [0, 0, 0], grid: [] })), /\.baseGame: must be null for a bought feature/],
      ['no base game on a base play', edit(line, (o) => (o.baseGame = null)), /\.baseGame: must be an object/],
      ['a jackpot pool as a number', edit(jackpot, (o) => (o.events[0].subOutcome.poolMicro = 5)), /\.poolMicro: must be an amount/],
      ['events that do not sum to the payout', edit(line, (o) => (o.events[0].payoutMicro = '1')), /\.payoutMicro: must be the events' sum, 1/],
      ['winTenths above the cap', edit(line, (o) => (o.winTenths = 50001)), /\.winTenths: must be an integer, 0 to 50000/],
      ['capped without the cap', edit(line, (o) => (o.capped = true)), /\.capped: must say whether winTenths is the cap/],
      ['no draws', edit(line, (o) => (o.draws = 0)), /\.draws: must be an integer, 1 to/],
    ];
    for (const [label, json, message] of corrupt) {
      it(label, () => {
        expect(() => gemsOutcomeOf(json())).to.throw(Error, message);
      });
    }
  });
});

// ---- the dispute pack (D32) ----------------------------------------------------------------

describe('gems dispute pack (D32, D41)', () => {
  const CONFIG = { minBetMicro: '100000', maxBetMicro: '100000000', payoutRounding: 'exact' };

  it('the par sheet: the exact returns of a base play and a bought feature, the configuration, rounding and currency', () => {
    const sheet = gemsPackParSheet({ config: CONFIG, payoutRounding: 'minor_unit', currency: 'EUR' });
    const base = gemsRtp(GEMS_MATH, false);
    const bought = gemsRtp(GEMS_MATH, true);
    expect(sheet).to.deep.equal({
      gameCode: 'gems',
      mathVersion: 'gems-1.0.0',
      config: CONFIG,
      payoutRounding: 'minor_unit',
      currency: 'EUR',
      featureBuyCost: '67',
      rtpBase: { fraction: base.fraction, decimal: base.decimal },
      rtpFeatureBuy: { fraction: bought.fraction, decimal: bought.decimal },
    });
    // gems.md's figures
    expect(sheet.rtpBase.decimal).to.equal('0.954588');
    expect(sheet.rtpFeatureBuy.decimal).to.equal('0.953044');
  });

  // a settled round's pack as the service would make it (round.json's and bets.json's fields
  // as the round views write them)
  function facts(play: Play, terms: Terms = {}, changes: Partial<PackFacts> = {}): PackFacts {
    const p = proof(play, terms);
    const outcome = played(play);
    const won = outcome.payoutMicro > 0n;
    const free = terms.isFree === true;
    const body = JSON.parse(JSON.stringify(p));
    return {
      roundId: ROUND_ID,
      round: { roundId: ROUND_ID, gameCode: 'gems', currency: p.currency, state: 'SETTLED', nonce: p.nonce, totalBetsMicro: free ? '0' : outcome.costMicro.toString(), totalPayoutsMicro: p.payoutMicro },
      bet: { amountMicro: outcome.costMicro.toString(), payoutMicro: p.payoutMicro, isFree: free, featureBuy: outcome.featurePurchased },
      proof: body,
      sheet: JSON.parse(JSON.stringify(gemsPackParSheet({ config: CONFIG, payoutRounding: p.payoutRounding, currency: p.currency }))),
      walletCalls: won ? [{ endpoint: 'win', requestBody: JSON.stringify({ amountMicro: p.payoutMicro }) }] : [],
      ...changes,
    };
  }
  const names = (checks: { name: string; ok: boolean }[]) => checks.map((c) => [c.name, c.ok]);

  it('a good pack: par sheet, proof, the proof is the round\'s, the payout and the win calls', () => {
    expect(names(gemsPackChecks(facts({ nonce: FEATURE })))).to.deep.equal([
      ['par_sheet', true],
      ['proof', true],
      ['proof_matches_round', true],
      ['payout', true],
      ['win_calls', true],
    ]);
    // a loss makes no win call
    expect(names(gemsPackChecks(facts({ nonce: LOSS })))).to.deep.equal([
      ['par_sheet', true],
      ['proof', true],
      ['proof_matches_round', true],
      ['payout', true],
    ]);
    for (const f of [facts({ nonce: 3, featureBuy: true }), facts({ ...JACKPOT, jackpotPoolMicro: POOL }), facts({ nonce: FEATURE, stakeMicro: 123_457n }, { payoutRounding: 'minor_unit', isFree: true })]) {
      expect(gemsPackChecks(f).filter((c) => !c.ok)).to.deep.equal([]);
    }
  });

  it('a payout other than the outcome\'s fails payout and win_calls', () => {
    const f = facts({ nonce: FEATURE });
    const checks = gemsPackChecks({
      ...f,
      round: { ...f.round, totalPayoutsMicro: '5000000' },
      bet: { ...f.bet, payoutMicro: '5000000' },
      walletCalls: [{ endpoint: 'win', requestBody: JSON.stringify({ amountMicro: '5000000' }) }],
    });
    expect(names(checks)).to.deep.equal([
      ['par_sheet', true],
      ['proof', true],
      ['proof_matches_round', false],
      ['payout', false],
      ['win_calls', false],
    ]);
  });

  it('a tampered proof fails proof, with its failing checks', () => {
    const f = facts({ nonce: FEATURE });
    (f.proof as Record<string, any>).outcome.events[1].payoutMicro = '1';
    const checks = gemsPackChecks(f);
    const check = checks.find((c) => c.name === 'proof')!;
    expect(check.ok).to.equal(false);
    expect((check.detail as { name: string }[]).map((c) => c.name)).to.deep.equal(['event_1']);
  });

  it('the proof of another round, or of another stake, does not match the round', () => {
    const other = facts({ nonce: LOSS });
    expect(names(gemsPackChecks({ ...other, roundId: '00000000-0000-4000-8000-000000000000' }))).to.deep.include(['proof_matches_round', false]);
    const f = facts({ nonce: LINE });
    const bet = { ...f.bet, amountMicro: '200000' };
    expect(names(gemsPackChecks({ ...f, bet }))).to.deep.include.members([
      ['proof_matches_round', false],
      ['payout', false],
    ]);
  });

  it('a par sheet with another return fails par_sheet', () => {
    const f = facts({ nonce: LINE });
    const sheet = { ...(f.sheet as Record<string, unknown>), rtpBase: { fraction: '97/100', decimal: '0.970000' } };
    expect(names(gemsPackChecks({ ...f, sheet }))[0]).to.deep.equal(['par_sheet', false]);
    expect(names(gemsPackChecks({ ...f, sheet: { gameCode: 'crash' } }))[0]).to.deep.equal(['par_sheet', false]);
  });

  it('the seed not revealed: the payout follows from round.json\'s stored outcome, or cannot be checked', () => {
    const f = facts({ nonce: FEATURE });
    const unrevealed = { ...f, proof: { serverSeedHash: SEED_HASH, proofStatus: SEED_NOT_REVEALED } };
    expect(names(gemsPackChecks(unrevealed))).to.deep.equal([
      ['par_sheet', true],
      ['proof', true],
      ['payout', false],
    ]);
    const stored = { ...unrevealed, round: { ...f.round, outcome: gemsOutcomeJson(played({ nonce: FEATURE })) } };
    expect(names(gemsPackChecks(stored))).to.deep.equal([
      ['par_sheet', true],
      ['proof', true],
      ['payout', true],
      ['win_calls', true],
    ]);
    const corrupt = { ...unrevealed, round: { ...f.round, outcome: { type: 'MULTI' } } };
    const payout = gemsPackChecks(corrupt).find((c) => c.name === 'payout')!;
    expect(payout.ok).to.equal(false);
    expect(payout.detail).to.match(/^rounds\.outcome/);
  });

  it('a voided round paid nothing', () => {
    const f = facts({ nonce: LOSS });
    const checks = gemsPackChecks({ ...f, round: { ...f.round, state: 'VOIDED', totalPayoutsMicro: '0' } });
    expect(checks.find((c) => c.name === 'payout')).to.deep.equal({ name: 'payout', ok: true, detail: 'voided: nothing paid' });
  });
});
