import { expect } from 'chai';
import { createHash, createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { curveCents, curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { centsText, crashModule, type CrashConfig } from '../../../src/shared/domain/games/crash.js';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { cycleConfigOf } from '../../../src/shared/game/rounds/cycle-config.js';
import { FLIGHT_GRACE_MS, cashOut } from '../../../src/shared/game/rounds/flight.js';
import { recallRound } from '../../../src/shared/game/reports/recall.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, tick, until } from '../../support/game.js';
import { CRASH_CLIENT_SEED, crashOperator, crashSeed, seatCrashPlayer, type CrashSeat } from '../../support/crash.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { committedDocument, operationOf, schemaCompiler } from '../../support/openapi.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';
import type { ApiResponse } from '../../support/signed-client.js';
import type { Player } from '../../support/player.js';

// Every read of a crash round (D40), through its game's module (D39), on rounds played for
// real with known crash points (sandbox seeds, D35) on a clock the test moves by hand: the
// proof (contract 2.11's CRASH outcome, the edge and caps, the bet and its cash-out) and `rgs
// verify` on it, the dispute pack (the module's return for the bet, the payout settled again
// from the stored cash-out's ms) and `rgs verify-pack`, the round views and their schema in
// docs/openapi.json, the recall, and the GGR and wallet-call reports.

const STAKE = 1_000_000n; // 10.00
const FUNDS = 100_000_000n; // 1,000.00
// a cash-out by hand, this many ms into the flight
const HAND_MS = 9000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

// D40 from its text, apart from src/shared/domain/games/crash.ts: x = the first 52 bits of h,
// crashCents = floor(100 * (100000 - e) * 2^52 / ((2^52 - x) * 100000)) within [100, 100000]
function referenceCrash(serverSeed: string, clientSeed: string, nonce: number, edge = 3000n) {
  const hex = createHmac('sha256', serverSeed).update(`${clientSeed}:${nonce}`).digest('hex');
  const x = BigInt(`0x${hex.slice(0, 14)}`) >> 4n;
  const n = 1n << 52n;
  const raw = (100n * (100000n - edge) * n) / ((n - x) * 100000n);
  return { x, crashCents: raw < 100n ? 100n : raw > 100000n ? 100000n : raw };
}

type Played = { seat: CrashSeat; roundId: string; serverSeed: string; crashCents: bigint };

describe('the reads of a crash round: proof, dispute pack, views, recall, reports (D40, D39)', function () {
  this.timeout(120_000);
  let h: Harness;
  let operator: TestOperator;
  let dir: string;
  let keysFile: string;
  let config: CrashConfig;
  let startedAt: Date;
  const players: Player[] = [];
  // auto cash-out at 2.00 below the crash point: won at 2.00
  let auto: Played;
  // no auto cash-out, cashed out by hand HAND_MS into the flight
  let hand: Played;
  // auto cash-out at 3.00 above the crash point: lost at the crash
  let lost: Played;
  // the session ended while betting was open: voided before any crash point
  let voided: Played;

  const get = (requestPath: string) => operator.request('GET', requestPath, undefined, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });
  const rgs = (...args: string[]): Promise<CliResult> =>
    runRgs(args, { env: { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/nowhere', REDIS_URL: 'redis://127.0.0.1:1' }, timeoutMs: 30_000 });
  const report = (result: CliResult) => JSON.parse(result.stdout) as { valid: boolean; checks: { name: string; ok: boolean; detail?: any; expected?: unknown }[]; derived?: any };
  const save = async (name: string, content: Uint8Array | string) => {
    const file = path.join(dir, name);
    await writeFile(file, content);
    return file;
  };
  const json = (files: Record<string, Uint8Array>, name: string) => JSON.parse(Buffer.from(files[name]!).toString('utf8'));

  // the answers as docs/openapi.json describes them, no field it does not name (as the
  // contract test checks every route's)
  const document = committedDocument();
  const compileSchema = schemaCompiler(document, { closed: true });
  function conforms(requestPath: string, response: ApiResponse) {
    const { operation } = operationOf(document, 'GET', requestPath);
    const validate = compileSchema(operation.responses[String(response.status)].content['application/json'].schema);
    expect(validate(response.body), `${requestPath}: ${JSON.stringify(validate.errors, null, 1)}`).to.equal(true);
  }

  async function seat(serverSeed: string): Promise<CrashSeat> {
    const seated = await seatCrashPlayer(h, operator, serverSeed, FUNDS);
    players.push(seated.player);
    return seated;
  }

  async function bet(seated: CrashSeat, autoCashOut?: string): Promise<string> {
    const ack = await seated.player.request('place_bet', { amountMicro: STAKE.toString(), ...(autoCashOut ? { autoCashOut } : {}) });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await seated.player.waitFor('bet_placed', (p) => p.betId === ack.betId);
    return ack.roundId as string;
  }

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rgs-crash-reads-'));
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
    startedAt = h.svc.now();
    operator = await crashOperator(h);
    const seeds = { auto: crashSeed(300n, 500n), hand: crashSeed(600n, 900n), lost: crashSeed(150n, 250n), voided: crashSeed(200n, 100000n) };
    const seats = { auto: await seat(seeds.auto.serverSeed), hand: await seat(seeds.hand.serverSeed), lost: await seat(seeds.lost.serverSeed), voided: await seat(seeds.voided.serverSeed) };

    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'crash', currency: 'EUR' }));
    const cycleId = pending.id;
    await tick(h, { cycleId, from: 'PENDING' });
    const roundIds = { auto: await bet(seats.auto, '2.00'), hand: await bet(seats.hand), lost: await bet(seats.lost, '3.00'), voided: await bet(seats.voided, '5.00') };
    // D7: a session ended while betting is open voids its round, which never flies
    expect((await operator.request('POST', `/v1/session/${seats.voided.sessionId}/terminate`, {})).status).to.equal(200);
    await until('the voided round', async () => (await h.svc.db.round.findUnique({ where: { id: roundIds.voided } }))?.state === 'VOIDED');

    await tick(h, { cycleId, from: 'BETTING_OPEN' });
    const start = (await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).flightStartedAt!.getTime();
    expect(await cashOut(h.svc, seats.hand.sessionId, new Date(start + HAND_MS))).to.deep.include({ ok: true, cashOutMultiplier: centsText(curveCents(HAND_MS)) });
    // past the auto cash-out's time and the lost round's crash, and their grace
    const endMs = Math.max(curveTime(200n), curveTime(seeds.lost.crashCents)) + FLIGHT_GRACE_MS + 5;
    h.shiftClock(endMs - (h.svc.now().getTime() - start));
    await tick(h, { cycleId, from: 'ROLLING' });
    await until('the flight to end', async () => (await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).phase === 'COOLDOWN');
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });

    // the sessions end: their seeds are revealed (D2, D5)
    for (const seated of [seats.auto, seats.hand, seats.lost]) {
      expect((await operator.request('POST', `/v1/session/${seated.sessionId}/terminate`, {}, { timestamp: Math.floor(h.svc.now().getTime() / 1000) })).status).to.equal(200);
    }
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    const played = (key: keyof typeof seats): Played => ({ seat: seats[key], roundId: roundIds[key], ...seeds[key] });
    [auto, hand, lost, voided] = [played('auto'), played('hand'), played('lost'), played('voided')];
    config = (await cycleConfigOf(h.svc, cycleId)) as unknown as CrashConfig;
    const keys = await fetch(`${h.baseUrl}/v1/keys`);
    keysFile = await save('keys.json', Buffer.from(await keys.arrayBuffer()));
  });

  after(async () => {
    for (const player of players) player.close();
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const handCents = () => curveCents(HAND_MS);
  const handPayout = () => (STAKE * handCents()) / 100n;

  describe('GET /v1/rounds/{roundId}/proof and rgs verify (contract 2.11)', () => {
    it('a won round: the CRASH outcome {crashMultiplier, u}, the crash versions, the terms and the bet with its cash-out; it verifies', async () => {
      const response = await get(`/v1/rounds/${auto.roundId}/proof`);
      expect(response.status, response.text).to.equal(200);
      conforms(`/v1/rounds/${auto.roundId}/proof`, response);
      const reference = referenceCrash(auto.serverSeed, CRASH_CLIENT_SEED, 0);
      expect(reference.crashCents).to.equal(auto.crashCents);
      expect(response.body).to.deep.equal({
        roundId: auto.roundId,
        gameCode: 'crash',
        rngVersion: 'crash-hmac-sha256-v1',
        mathVersion: 'crash-1.0.0',
        serverSeed: auto.serverSeed,
        serverSeedHash: sha256(auto.serverSeed),
        clientSeed: CRASH_CLIENT_SEED,
        nonce: 0,
        outcome: { type: 'CRASH', crashMultiplier: Number(auto.crashCents) / 100, u: Number(reference.x) / 2 ** 52 },
        commissionMicro: '3000',
        maxMultiplier: '1000.00',
        maxPayoutMicro: '100000000000',
        payoutRounding: 'exact',
        currency: 'EUR',
        bet: { amountMicro: '1000000', autoCashOut: '2.00', cashOutMultiplier: '2.00', cashOutMs: curveTime(200n), payoutMicro: '2000000', voided: false },
        sessionId: auto.seat.sessionId,
      });

      const result = await rgs('verify', '--proof', await save('auto-proof.json', response.text));
      expect(result.code, result.stdout + result.stderr).to.equal(0);
      const verdict = report(result);
      expect(verdict.checks.map((c) => c.name)).to.deep.equal(['shape', 'outcome_type', 'rng_version', 'math_version', 'server_seed_hash', 'crash_multiplier', 'u', 'cash_out', 'payout']);
      expect(verdict.derived).to.deep.include({ x: reference.x.toString(), crashMultiplier: centsText(auto.crashCents), cashOutMultiplier: '2.00', won: true, payoutMicro: '2000000' });
    });

    it('a cash-out by hand and a lost round: the proof carries the cash-out\'s ms (or none) and verifies; a voided round has none', async () => {
      const byHand = await get(`/v1/rounds/${hand.roundId}/proof`);
      expect(byHand.status, byHand.text).to.equal(200);
      expect(byHand.body.bet).to.deep.equal({
        amountMicro: '1000000',
        autoCashOut: null,
        cashOutMultiplier: centsText(handCents()),
        cashOutMs: HAND_MS,
        payoutMicro: handPayout().toString(),
        voided: false,
      });
      expect((await rgs('verify', '--proof', await save('hand-proof.json', byHand.text))).code).to.equal(0);

      const lostProof = await get(`/v1/rounds/${lost.roundId}/proof`);
      expect(lostProof.status, lostProof.text).to.equal(200);
      expect(lostProof.body.outcome.crashMultiplier).to.equal(Number(lost.crashCents) / 100);
      expect(lostProof.body.bet).to.deep.equal({ amountMicro: '1000000', autoCashOut: '3.00', cashOutMultiplier: null, cashOutMs: null, payoutMicro: '0', voided: false });
      const result = await rgs('verify', '--proof', await save('lost-proof.json', lostProof.text));
      expect(result.code, result.stdout).to.equal(0);
      expect(report(result).derived).to.include({ won: false, cashOutMultiplier: null, payoutMicro: '0' });

      // a round voided before its flight has no outcome: nothing to prove
      const none = await get(`/v1/rounds/${voided.roundId}/proof`);
      expect(none.status, none.text).to.equal(404);
      expect(none.body.error).to.equal('round_not_settled');
    });

    it('rgs verify names what a changed proof breaks: the crash point, the cash-out, the payout', async () => {
      const proof = (await get(`/v1/rounds/${hand.roundId}/proof`)).body;
      const cases: [string, unknown, string][] = [
        ['a higher crash point', { ...proof, outcome: { ...proof.outcome, crashMultiplier: Math.round(proof.outcome.crashMultiplier * 100 + 1) / 100 } }, 'crash_multiplier'],
        // a multiplier the curve had not reached at the cash-out's ms
        ['a better cash-out', { ...proof, bet: { ...proof.bet, cashOutMultiplier: centsText(handCents() + 1n) } }, 'cash_out'],
        ['a larger payout', { ...proof, bet: { ...proof.bet, payoutMicro: (handPayout() + 1n).toString() } }, 'payout'],
        // the same seed under no edge gives a higher crash point (docs/games/crash.md)
        ['another edge', { ...proof, commissionMicro: '0' }, 'crash_multiplier'],
      ];
      for (const [label, body, failing] of cases) {
        const result = await rgs('verify', '--proof', await save(`changed-${failing}.json`, JSON.stringify(body)));
        expect(result.code, `${label}: ${result.stdout}`).to.equal(1);
        expect(report(result).checks.filter((c) => !c.ok).map((c) => c.name), label).to.deep.equal([failing]);
      }
    });

  });

  describe('the dispute pack and rgs verify-pack (D32)', () => {
    const pack = async (roundId: string) => {
      const response = await get(`/v1/rounds/${roundId}/dispute-pack`);
      expect(response.status, response.text).to.equal(200);
      return response.bytes;
    };

    it('a won round: round.json is the round view, proof.json the proof, par-sheet.json the module\'s exact return for the bet; it verifies', async () => {
      const bytes = await pack(auto.roundId);
      const files = unzipSync(bytes);
      expect(json(files, 'round.json')).to.deep.equal((await get(`/v1/rounds/${auto.roundId}`)).body);
      expect(json(files, 'proof.json')).to.deep.equal((await get(`/v1/rounds/${auto.roundId}/proof`)).body);
      const rtp = crashModule.rtp(config, { autoCashOutCents: 200n }, STAKE);
      expect(json(files, 'par-sheet.json')).to.deep.equal({
        gameCode: 'crash',
        config: crashModule.config.write(config),
        currency: 'EUR',
        bet: { autoCashOut: '2.00' },
        stakeMicro: '1000000',
        rtp: { fraction: rtp.fraction, decimal: rtp.decimal },
      });
      // docs/games/crash.md's table: an auto cash-out at 2.00 at the default edge
      expect(rtp.fraction).to.equal('1092122909637345/1125899906842624');
      expect(json(files, 'par-sheet.json').config).to.include({ commissionMicro: '3000', maxMultiplier: '1000.00', bettingWindowMs: 1500 });

      const result = await rgs('verify-pack', await save('auto.zip', bytes), '--keys', keysFile);
      expect(result.code, result.stdout + result.stderr).to.equal(0);
      const checks = report(result).checks;
      expect(checks.filter((c) => !c.ok)).to.deep.equal([]);
      expect(checks.map((c) => c.name)).to.include.members(['par_sheet', 'proof', 'proof_matches_round', 'payout', 'win_calls']);
      expect(checks.find((c) => c.name === 'payout')!.detail).to.deep.equal({
        crashMultiplier: centsText(auto.crashCents),
        outcomeProven: true,
        cashOutMs: curveTime(200n),
        cashOutMultiplier: '2.00',
        won: true,
        expected: '2000000',
      });
    });

    it('a cash-out by hand: the payout is settled again from the stored ms; a lost and a voided round verify too', async () => {
      const handResult = await rgs('verify-pack', await save('hand.zip', await pack(hand.roundId)), '--keys', keysFile);
      expect(handResult.code, handResult.stdout).to.equal(0);
      expect(report(handResult).checks.find((c) => c.name === 'payout')!.detail).to.include({
        cashOutMs: HAND_MS,
        cashOutMultiplier: centsText(handCents()),
        won: true,
        expected: handPayout().toString(),
      });
      const lostFiles = unzipSync(await pack(lost.roundId));
      expect(json(lostFiles, 'par-sheet.json')).to.include({ stakeMicro: '1000000' }).and.deep.include({ bet: { autoCashOut: '3.00' } });
      const lostResult = await rgs('verify-pack', await save('lost.zip', await pack(lost.roundId)), '--keys', keysFile);
      expect(lostResult.code, lostResult.stdout).to.equal(0);
      expect(report(lostResult).checks.find((c) => c.name === 'payout')!.detail).to.include({ won: false, cashOutMultiplier: null, expected: '0' });

      const voidedFiles = unzipSync(await pack(voided.roundId));
      expect(json(voidedFiles, 'proof.json')).to.include({ proofStatus: 'no_outcome' });
      const voidedResult = await rgs('verify-pack', await save('voided.zip', await pack(voided.roundId)), '--keys', keysFile);
      expect(voidedResult.code, voidedResult.stdout).to.equal(0);
      expect(report(voidedResult).checks.find((c) => c.name === 'payout')!.detail).to.equal('voided: nothing paid');
    });
  });

  describe('the round views, the recall and the reports', () => {
    it('GET /v1/rounds/{roundId}: the crash point, the cash-out\'s multiplier and ms, won, and the bet\'s autoCashOut', async () => {
      const views = await Promise.all([auto, hand, lost, voided].map(async (played) => {
        const response = await get(`/v1/rounds/${played.roundId}`);
        expect(response.status, response.text).to.equal(200);
        conforms(`/v1/rounds/${played.roundId}`, response);
        return response.body;
      }));
      const [autoView, handView, lostView, voidedView] = views;
      expect(autoView).to.deep.include({
        gameCode: 'crash',
        state: 'SETTLED',
        outcomeSide: null,
        outcomeSum: null,
        crashMultiplier: centsText(auto.crashCents),
        cashOutMultiplier: '2.00',
        cashOutMs: curveTime(200n),
        won: true,
        totalBetsMicro: '1000000',
        totalPayoutsMicro: '2000000',
      });
      expect(autoView.bets[0]).to.deep.include({ side: null, autoCashOut: '2.00', amountMicro: '1000000', payoutMicro: '2000000' });
      expect(handView).to.deep.include({ cashOutMultiplier: centsText(handCents()), cashOutMs: HAND_MS, won: true, totalPayoutsMicro: handPayout().toString() });
      expect(handView.bets[0]).to.deep.include({ side: null, autoCashOut: null });
      expect(lostView).to.deep.include({ crashMultiplier: centsText(lost.crashCents), cashOutMultiplier: null, cashOutMs: null, won: false, totalPayoutsMicro: '0' });
      expect(lostView.bets[0]).to.deep.include({ autoCashOut: '3.00' });
      expect(voidedView).to.deep.include({ state: 'VOIDED', crashMultiplier: null, cashOutMultiplier: null, cashOutMs: null, won: null });
    });

    it('GET /v1/rounds lists them with the same fields', async () => {
      const listing = `/v1/rounds?from=${encodeURIComponent(startedAt.toISOString())}&to=${encodeURIComponent(new Date(h.svc.now().getTime() + 60_000).toISOString())}`;
      const response = await get(listing);
      expect(response.status, response.text).to.equal(200);
      conforms(listing, response);
      const byId = new Map((response.body.rounds as Record<string, unknown>[]).map((round) => [round.roundId, round]));
      expect(byId.get(auto.roundId)).to.deep.include({ crashMultiplier: centsText(auto.crashCents), cashOutMultiplier: '2.00', cashOutMs: curveTime(200n), won: true });
      expect(byId.get(lost.roundId)).to.deep.include({ cashOutMultiplier: null, won: false });
      expect(byId.size).to.equal(4);
    });

    it('the recall: the flight (auto cash-out, crash point, cash-out multiplier and ms), won from the cash-out, the balances, the edge for the check', async () => {
      const recalled = await recallRound(h.svc, operator.operatorId, auto.roundId);
      expect(recalled).to.deep.include({
        gameCode: 'crash',
        state: 'SETTLED',
        side: null,
        outcome: null,
        autoCashOut: '2.00',
        crashMultiplier: centsText(auto.crashCents),
        cashOutMultiplier: '2.00',
        cashOutMs: curveTime(200n),
        won: true,
        payoutMicro: '2000000',
        balanceBefore: { micro: FUNDS.toString(), gap: null },
        balanceAfter: { micro: (FUNDS - STAKE + 2_000_000n).toString(), gap: null },
      });
      expect(recalled!.proof).to.include({ serverSeed: auto.serverSeed, clientSeed: CRASH_CLIENT_SEED, nonce: 0, commissionMicro: '3000' });
      const byHand = await recallRound(h.svc, operator.operatorId, hand.roundId);
      expect(byHand).to.deep.include({ autoCashOut: null, cashOutMultiplier: centsText(handCents()), cashOutMs: HAND_MS, won: true });
      const lostRound = await recallRound(h.svc, operator.operatorId, lost.roundId);
      expect(lostRound).to.deep.include({ autoCashOut: '3.00', cashOutMultiplier: null, cashOutMs: null, won: false, payoutMicro: '0' });
      const voidedRound = await recallRound(h.svc, operator.operatorId, voided.roundId);
      expect(voidedRound).to.deep.include({ state: 'VOIDED', crashMultiplier: null, won: null, payoutMicro: null });
      expect(voidedRound!.proof).to.include({ serverSeed: null, revealableAfter: null });
    });

    it('the GGR report has a crash line; the wallet-call report counts the crash rounds\' calls', async () => {
      const range = `from=${encodeURIComponent(startedAt.toISOString())}&to=${encodeURIComponent(new Date(h.svc.now().getTime() + 60_000).toISOString())}`;
      const ggr = await get(`/v1/reports/ggr?${range}`);
      expect(ggr.status, ggr.text).to.equal(200);
      conforms(`/v1/reports/ggr?${range}`, ggr);
      const payouts = 2_000_000n + handPayout();
      expect(ggr.body.games).to.deep.equal([
        {
          gameCode: 'crash',
          currency: 'EUR',
          rounds: 4,
          bets: 3,
          stakesMicro: (3n * STAKE).toString(),
          payoutsMicro: payouts.toString(),
          ggrMicro: (3n * STAKE - payouts).toString(),
          voidedRounds: 1,
          sandbox: true,
        },
      ]);
      const calls = await get(`/v1/reports/wallet-calls?${range}`);
      expect(calls.status, calls.text).to.equal(200);
      const counted = Object.fromEntries((calls.body.endpoints as { endpoint: string; calls: number; ok: number }[]).map((e) => [e.endpoint, [e.calls, e.ok]]));
      // four debits, the two wins, the voided round's rollback (and the balance reads of the
      // four launches and their connections)
      expect(counted.bet).to.deep.equal([4, 4]);
      expect(counted.win).to.deep.equal([2, 2]);
      expect(counted.rollback).to.deep.equal([1, 1]);
    });
  });
});
