import { expect } from 'chai';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { curveCents, curveTime } from '../../src/shared/domain/games/crash-curve.js';
import { buildCrashProof, centsText, crashFromHash, crashModule, settleCrash, verifyCrashProof, type CrashConfig } from '../../src/shared/domain/games/crash.js';
import { verifyRoundProof } from '../../src/shared/domain/games/proofs.js';
import type { RoundRecord } from '../../src/shared/domain/games/types.js';
import { publicJwk, signedPack, verifyPack, type PackContent } from '../../src/shared/domain/dispute-pack.js';
import { buildDiceProof } from '../../src/shared/domain/proof.js';
import { roundHash, serverSeedHash } from '../../src/shared/domain/seeds.js';

// A crash round's proof and dispute pack, pure (D40, D32, D39): the proof the module builds
// from a stored round verifies, and `rgs verify`'s check names what a change breaks; a pack
// whose par sheet is the module's return for the bet, and whose payout follows from the crash
// point and the stored cash-out, verifies, rounded to the minor unit too (D46).

const SEED = '1c27fcee55035c1c8c5b0514d102bbfbf16f7eafa981cb8523c654bd16747f6f';
const CLIENT = 'player-seed';
const STAKE = 1_000_000n;

// docs/games/crash.md's example: player-seed:1 under SEED crashes at 2.15x at a 3% edge
const NONCE = 1;

function round(config: CrashConfig, play: { autoCashOutCents: bigint | null; cashOutMs: number | null; state?: RoundRecord['state'] }, stake = STAKE) {
  const outcome = crashFromHash(roundHash({ serverSeed: SEED, clientSeed: CLIENT, nonce: NONCE }), config.commissionMicro);
  const settled = settleCrash(stake, { autoCashOutCents: play.autoCashOutCents }, outcome, config, play.cashOutMs ?? undefined);
  const record: RoundRecord = {
    state: play.state ?? 'SETTLED',
    side: null,
    autoCashOutCents: play.autoCashOutCents,
    outcomeSide: null,
    outcomeSum: null,
    diceValues: [],
    lowWeight: 1n,
    highWeight: 1n,
    crashCents: outcome.crashCents,
    cashOutCents: settled.cashOutCents,
    // a won auto cash-out is recorded at its own time (D40)
    cashOutMs: settled.won ? (play.cashOutMs ?? curveTime(settled.cashOutCents!)) : null,
    outcome: null,
    featureBuy: false,
  };
  return { outcome, settled, record };
}

function proofOf(config: CrashConfig, play: { autoCashOutCents: bigint | null; cashOutMs: number | null; state?: RoundRecord['state'] }, payoutMicro?: bigint) {
  const { record, settled } = round(config, play);
  return buildCrashProof({
    roundId: randomUUID(),
    gameCode: 'crash',
    sessionId: randomUUID(),
    currency: 'EUR',
    serverSeed: SEED,
    serverSeedHash: serverSeedHash(SEED),
    clientSeed: CLIENT,
    nonce: NONCE,
    record,
    config,
    stakeMicro: STAKE,
    payoutMicro: payoutMicro ?? settled.payoutMicro,
    isFree: false,
  });
}

const failing = (verdict: { checks: { name: string; ok: boolean }[] }) => verdict.checks.filter((c) => !c.ok).map((c) => c.name);
const defaults = crashModule.config.defaults;

describe('a crash round\'s proof (contract 2.11, D40)', () => {
  it('carries the CRASH outcome of the stored point, u = x / 2^52, and verifies: crash point, cash-out and payout recomputed', () => {
    const proof = proofOf(defaults, { autoCashOutCents: 200n, cashOutMs: null });
    expect(proof.outcome).to.deep.equal({ type: 'CRASH', crashMultiplier: 2.15, u: 2473393578520758 / 2 ** 52 });
    expect(proof.bet).to.deep.equal({ amountMicro: '1000000', autoCashOut: '2.00', cashOutMultiplier: '2.00', cashOutMs: curveTime(200n), payoutMicro: '2000000', voided: false });
    const verdict = verifyCrashProof(JSON.parse(JSON.stringify(proof)));
    expect(failing(verdict)).to.deep.equal([]);
    expect(verdict.derived).to.deep.include({ x: '2473393578520758', crashMultiplier: '2.15', cashOutMultiplier: '2.00', won: true, payoutMicro: '2000000' });
    // the registry's verifier asks the proof's game
    expect(failing(verifyRoundProof(proof))).to.deep.equal([]);
  });

  it('a cash-out by hand before the crash time wins at m(t); a lost bet pays 0; a voided round pays nothing whatever the flight', () => {
    const byHand = proofOf(defaults, { autoCashOutCents: null, cashOutMs: 5000 });
    expect(byHand.bet).to.include({ cashOutMultiplier: centsText(curveCents(5000)), cashOutMs: 5000 });
    expect(failing(verifyCrashProof(byHand))).to.deep.equal([]);
    const lost = proofOf(defaults, { autoCashOutCents: 300n, cashOutMs: null });
    expect(lost.bet).to.include({ cashOutMultiplier: null, payoutMicro: '0' });
    expect(failing(verifyCrashProof(lost))).to.deep.equal([]);
    const voided = proofOf(defaults, { autoCashOutCents: 200n, cashOutMs: null, state: 'VOIDED' }, 0n);
    expect(voided.bet).to.include({ voided: true, payoutMicro: '0' });
    expect(failing(verifyCrashProof(voided))).to.deep.equal([]);
  });

  it('names the check a change breaks', () => {
    const proof = proofOf(defaults, { autoCashOutCents: null, cashOutMs: 5000 });
    const cases: [string, unknown, string[]][] = [
      ['another seed hash', { ...proof, serverSeedHash: '0'.repeat(64) }, ['server_seed_hash']],
      ['a higher crash point', { ...proof, outcome: { ...proof.outcome, crashMultiplier: 2.16 } }, ['crash_multiplier']],
      ['another u', { ...proof, outcome: { ...proof.outcome, u: 0.5 } }, ['u']],
      ['a later cash-out', { ...proof, bet: { ...proof.bet, cashOutMs: 9000 } }, ['cash_out', 'payout']],
      ['a cash-out after the crash', { ...proof, bet: { ...proof.bet, cashOutMs: curveTime(215n) } }, ['cash_out', 'payout']],
      ['more paid', { ...proof, bet: { ...proof.bet, payoutMicro: '9999999' } }, ['payout']],
      ['dice\'s versions', { ...proof, rngVersion: 'dice-hmac-sha256-v1', mathVersion: 'dice-1.0.0' }, ['rng_version', 'math_version']],
    ];
    for (const [label, body, names] of cases) expect(failing(verifyCrashProof(body)), label).to.deep.equal(names);
    expect(failing(verifyCrashProof({ ...proof, outcome: { type: 'DICE', diceValues: [1], outcomeSum: 1, outcomeSide: 'LOW' } }))).to.deep.equal(['outcome_type']);
    for (const body of [{ ...proof, bet: { ...proof.bet, autoCashOut: '1.00' } }, { ...proof, maxMultiplier: '2' }, { ...proof, commissionMicro: 3000 }, 'proof']) {
      expect(failing(verifyCrashProof(body)), JSON.stringify(body).slice(0, 60)).to.deep.equal(['shape']);
    }
  });

  it('rgs verify asks the proof\'s game: dice\'s proof is checked as before, an unknown game is a shape problem', () => {
    const dice = buildDiceProof({
      roundId: randomUUID(),
      gameCode: 'dice',
      sessionId: randomUUID(),
      serverSeed: SEED,
      serverSeedHash: serverSeedHash(SEED),
      clientSeed: CLIENT,
      nonce: 0,
      lowWeight: 1n,
      highWeight: 1n,
      diceValues: [1],
      outcomeSum: 1,
      outcomeSide: 'LOW',
    });
    const verdict = verifyRoundProof(dice);
    expect(failing(verdict)).to.deep.equal([]);
    expect(verdict.checks.map((c) => c.name)).to.include.members(['dice_values', 'outcome_sum', 'outcome_side']);
    expect(failing(verifyRoundProof({ ...dice, gameCode: 'roulette', rngVersion: 'roulette-v1' }))).to.deep.equal(['shape']);
  });
});

describe('a crash round\'s dispute pack (D32, D40)', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicJwk('pk_crash', publicKey.export({ format: 'jwk' }).x!, { createdAt: '2026-11-01T00:00:00.000Z', retiredAt: null, revokedAt: null });
  const key = { kid: 'pk_crash', privateKey };

  function content(config: CrashConfig, currency: string, play: { autoCashOutCents: bigint | null; cashOutMs: number | null }, stake = STAKE): PackContent {
    const { record, settled } = round(config, play, stake);
    const roundId = randomUUID();
    const paid = settled.won ? settled.payoutMicro - (config.payoutRounding === 'minor_unit' ? settled.payoutMicro % 1000n : 0n) : 0n;
    const proof = buildCrashProof({
      roundId,
      gameCode: 'crash',
      sessionId: randomUUID(),
      currency,
      serverSeed: SEED,
      serverSeedHash: serverSeedHash(SEED),
      clientSeed: CLIENT,
      nonce: NONCE,
      record,
      config,
      stakeMicro: stake,
      payoutMicro: paid,
      isFree: false,
    });
    const bet = { betId: randomUUID(), status: 'SETTLED', side: null, amountMicro: stake.toString(), isFree: false, payoutMicro: paid.toString(), autoCashOut: proof.bet.autoCashOut };
    return {
      'round.json': {
        roundId,
        gameCode: 'crash',
        currency,
        state: 'SETTLED',
        outcomeSide: null,
        outcomeSum: null,
        ...crashModule.rounds.view(record),
        totalBetsMicro: stake.toString(),
        totalPayoutsMicro: paid.toString(),
        bets: [bet],
      },
      'bets.json': [bet],
      'wallet-calls.json': settled.won ? [{ endpoint: 'win', requestBody: JSON.stringify({ amountMicro: paid.toString() }), responseBody: '{"status":"RS_OK"}' }] : [],
      'proof.json': proof,
      'par-sheet.json': crashModule.rounds.parSheet(config, record, stake, currency),
    };
  }

  const packOf = (c: PackContent) => {
    const roundId = (c['round.json'] as { roundId: string }).roundId;
    const { files } = signedPack({ roundId, operatorId: 'op-1', createdAt: new Date('2026-11-27T10:00:00.000Z') }, c, key);
    return new Map(files.map(({ name, bytes }) => [name, new Uint8Array(bytes)]));
  };

  it('verifies a won, a cashed-out and a lost round; the payout check settles the bet again from the stored ms', () => {
    for (const play of [
      { autoCashOutCents: 200n, cashOutMs: null },
      { autoCashOutCents: null, cashOutMs: 7000 },
      { autoCashOutCents: 300n, cashOutMs: null },
    ]) {
      const verdict = verifyPack(packOf(content(defaults, 'EUR', play)), { keys: [jwk] });
      expect(failing(verdict), String(play.autoCashOutCents ?? play.cashOutMs)).to.deep.equal([]);
      expect(verdict.checks.map((c) => c.name)).to.include.members(['par_sheet', 'proof', 'proof_matches_round', 'payout']);
    }
  });

  it('the par sheet is the module\'s exact return for the bet, counted as paid in minor units for a minor_unit configuration (D46)', () => {
    // a stake whose payout at 2.15x is not whole cents: 1.23456 EUR pays 2.65430, booked 2.65
    const stake = 123456n;
    const rounded: CrashConfig = { ...defaults, payoutRounding: 'minor_unit' };
    const c = content(rounded, 'EUR', { autoCashOutCents: 215n, cashOutMs: null }, stake);
    expect((c['bets.json'] as { payoutMicro: string }[])[0]!.payoutMicro).to.equal('265000');
    const sheet = c['par-sheet.json'] as { rtp: { fraction: string }; currency: string };
    const rtp = crashModule.rtp(rounded, { autoCashOutCents: 215n }, stake, 1000n);
    expect(rtp.fraction).to.not.equal(crashModule.rtp(rounded, { autoCashOutCents: 215n }, stake).fraction);
    expect(sheet).to.deep.include({ currency: 'EUR', stakeMicro: '123456', rtp: { fraction: rtp.fraction, decimal: rtp.decimal } });
    expect(failing(verifyPack(packOf(c), { keys: [jwk] }))).to.deep.equal([]);
    // the same pack with the nominal return is refused
    const nominal = crashModule.rtp(rounded, { autoCashOutCents: 215n }, stake);
    const unrounded = { ...c, 'par-sheet.json': { ...sheet, rtp: { fraction: nominal.fraction, decimal: nominal.decimal } } };
    expect(failing(verifyPack(packOf(unrounded), { keys: [jwk] }))).to.deep.equal(['par_sheet']);
  });

  it('fails the check a changed content breaks: the par sheet, the payout, the proof\'s bet', () => {
    const base = content(defaults, 'EUR', { autoCashOutCents: null, cashOutMs: 7000 });
    const sheet = base['par-sheet.json'] as Record<string, unknown>;
    const wrongSheet = { ...base, 'par-sheet.json': { ...sheet, rtp: { fraction: '97/100', decimal: '0.970000' } } };
    expect(failing(verifyPack(packOf(wrongSheet), { keys: [jwk] }))).to.deep.equal(['par_sheet']);
    const otherBet = { ...base, 'par-sheet.json': { ...sheet, bet: { autoCashOut: '5.00' } } };
    expect(failing(verifyPack(packOf(otherBet), { keys: [jwk] }))).to.deep.equal(['par_sheet']);
    const roundJson = base['round.json'] as Record<string, unknown>;
    const laterCashOut = { ...base, 'round.json': { ...roundJson, cashOutMs: 8000 } };
    // the win call carried the payout of the cash-out as it was
    expect(failing(verifyPack(packOf(laterCashOut), { keys: [jwk] }))).to.deep.equal(['proof_matches_round', 'payout', 'win_calls']);
    const bets = base['bets.json'] as Record<string, unknown>[];
    const morePaid = { ...base, 'bets.json': [{ ...bets[0], payoutMicro: '9999999' }] };
    expect(failing(verifyPack(packOf(morePaid), { keys: [jwk] }))).to.deep.equal(['payout']);
  });
});
