import { expect } from 'chai';
import { createHash, createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setGameConfig, type GameConfigValues } from '../../../src/shared/game/operators/game-config.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { operatorWith as sharedOperatorWith } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { runRgs } from '../../support/rgs-cli.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// Provable fairness and the round life cycle through the real flow (every role in this one
// process, the wallet simulator as the operator's wallet): nonces per session and seed (D1),
// proofs that an independent verifier reproduces (contract 2.11, D2, D19), seed rotation
// (D4, D5), operator termination and its voids (contract 3.1, 3.3, 8.6, D7, D8), the engine
// clock and its broadcasts (D1), and the weight snapshot of a cycle (8.6).

// ---------------------------------------------------------------------------------------
// An independent D2 verifier: written from DECISIONS D2 alone, sharing no code with the
// service (the hex is read with BigInt, not Buffer.readUInt32BE as in src/).
type Derived = { side: 'LOW' | 'HIGH'; face: number };

function deriveD2(serverSeed: string, clientSeed: string, nonce: number, lowWeight: bigint, highWeight: bigint): Derived {
  const hex = createHmac('sha256', serverSeed).update(`${clientSeed}:${nonce}`).digest('hex');
  const a = BigInt(`0x${hex.slice(0, 8)}`);
  const b = BigInt(`0x${hex.slice(8, 16)}`);
  const side = a * (lowWeight + highWeight) < lowWeight * 4294967296n ? 'LOW' : 'HIGH';
  return { side, face: (side === 'LOW' ? 1 : 4) + Number(b % 3n) };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

// bounded polling of state that has no message of its own (DB rows, the simulator's ledger)
async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const rgs = (args: string[]) => runRgs(args, { timeoutMs: 20_000 });

const index = (player: Player, event: string, where: (payload: any) => boolean = () => true) =>
  player.messages.findIndex((m) => m.event === event && where(m.payload));

describe('fairness and the round life cycle, through the real flow', function () {
  this.timeout(30_000);
  let h: Harness;
  let scratch: string;
  const players: Player[] = [];

  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
    scratch = await mkdtemp(join(tmpdir(), 'rgs-fairness-'));
  });
  after(async () => {
    for (const player of players) player.close();
    await h.close();
    await rm(scratch, { recursive: true, force: true });
  });
  afterEach(() => {
    for (const endpoint of ['balance', 'bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
    expect(h.wallet.violations).to.deep.equal([]);
  });

  const operatorWith = (config: Partial<GameConfigValues> = {}) => sharedOperatorWith(h, config);

  async function seated(operator: TestOperator, balance: bigint, overrides: Record<string, unknown> = {}) {
    const body = operator.sessionBody(overrides);
    const playerRef = body.playerRef as string;
    if (body.mode !== 'demo') h.wallet.setBalance(playerRef, 'EUR', balance);
    const launch = await operator.request('POST', '/v1/session', body);
    expect(launch.status, launch.text).to.equal(200);
    const player = await Player.connect(h.baseUrl, launch.body.sessionToken);
    players.push(player);
    const connected = await player.waitFor('connected');
    return { player, playerRef, session: launch.body as { sessionId: string; sessionToken: string; serverSeedHash: string; expiresAt: string }, connected };
  }

  // the BETTING_OPEN of a cycle not yet used, with time left to bet in it
  async function openCycle(player: Player, used: Set<string>): Promise<string> {
    const open = await player.waitFor(
      'round_state',
      (p) => p.phase === 'BETTING_OPEN' && !used.has(p.cycleId) && Date.parse(p.phaseEndsAt) - Date.now() > 400,
    );
    used.add(open.cycleId);
    return open.cycleId as string;
  }

  async function bet(player: Player, side: 'LOW' | 'HIGH', amountMicro: string): Promise<{ betId: string; roundId: string }> {
    const ack = await player.request('place_bet', { side, amountMicro });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    return ack;
  }

  const proofOf = (operator: TestOperator, roundId: string) => operator.request('GET', `/v1/rounds/${roundId}/proof`);
  const terminate = (operator: TestOperator, sessionId: string) => operator.request('POST', `/v1/session/${sessionId}/terminate`, {});
  const betSettled = (betId: string) =>
    until(`bet ${betId} SETTLED`, async () => {
      const row = await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } });
      return row.status === 'SETTLED' && row;
    });

  describe('nonces (D1)', () => {
    it('a session counts 0, 1, 2 under its seed; skipped cycles and rejected bets use none; sessions count apart', async () => {
      const operator = await operatorWith();
      const a = await seated(operator, 10_000_000n);
      const b = await seated(operator, 10_000_000n);
      expect(a.connected).to.include({ sessionId: a.session.sessionId, serverSeedHash: a.session.serverSeedHash, nonce: 0 });
      expect(b.connected.nonce).to.equal(0);
      const used = new Set<string>();

      // cycle 1: both sessions bet, each gets a round of its own with its own nonce 0
      const c1 = await openCycle(a.player, used);
      const a1 = await bet(a.player, 'LOW', '100000');
      const b1 = await bet(b.player, 'HIGH', '200000');
      expect(a1.roundId).to.not.equal(b1.roundId);
      const second = await a.player.request('place_bet', { side: 'HIGH', amountMicro: '100000' });
      expect(second).to.deep.equal({ ok: false, reason: 'already_bet_this_round' });
      expect((await a.player.waitFor('round_result', (p) => p.roundId === a1.roundId)).nonce).to.equal(0);
      expect((await b.player.waitFor('round_result', (p) => p.roundId === b1.roundId)).nonce).to.equal(0);

      // cycle 2: a sits it out, b bets again
      const c2 = await openCycle(a.player, used);
      const b2 = await bet(b.player, 'LOW', '200000');
      expect((await b.player.waitFor('round_result', (p) => p.roundId === b2.roundId)).nonce).to.equal(1);

      // cycle 3: a's bet the wallet refuses (NOT_ENOUGH_MONEY) takes no nonce; the next one does
      const c3 = await openCycle(a.player, used);
      const refused = await a.player.request('place_bet', { side: 'LOW', amountMicro: '50000000', clientBetId: 'too-much' });
      expect(refused).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY' });
      expect(await a.player.waitFor('bet_rejected', (p) => p.clientBetId === 'too-much')).to.include({ reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY' });
      const a2 = await bet(a.player, 'HIGH', '100000');
      expect((await a.player.waitFor('round_result', (p) => p.roundId === a2.roundId)).nonce).to.equal(1);

      // cycle 4
      const c4 = await openCycle(a.player, used);
      const a3 = await bet(a.player, 'LOW', '100000');
      const r3 = await a.player.waitFor('round_result', (p) => p.roundId === a3.roundId);
      expect(r3).to.include({ nonce: 2, cycleId: c4 });

      const db = h.svc.db;
      const seedA = await db.seed.findFirstOrThrow({ where: { sessionId: a.session.sessionId, current: true } });
      expect(seedA.nextNonce).to.equal(3);
      const roundsA = await db.round.findMany({ where: { sessionId: a.session.sessionId }, orderBy: { nonce: 'asc' } });
      expect(roundsA.map((r) => [r.id, r.cycleId, r.nonce, r.seedId])).to.deep.equal([
        [a1.roundId, c1, 0, seedA.id],
        [a2.roundId, c3, 1, seedA.id],
        [a3.roundId, c4, 2, seedA.id],
      ]);
      const roundsB = await db.round.findMany({ where: { sessionId: b.session.sessionId }, orderBy: { nonce: 'asc' } });
      expect(roundsB.map((r) => [r.id, r.cycleId, r.nonce])).to.deep.equal([
        [b1.roundId, c1, 0],
        [b2.roundId, c2, 1],
      ]);
      expect(roundsB[0]!.seedId).to.not.equal(seedA.id);
      // one round per session per cycle: cycle 1 has exactly the two sessions' rounds
      expect((await db.round.findMany({ where: { cycleId: c1 } })).map((r) => r.sessionId).sort()).to.deep.equal(
        [a.session.sessionId, b.session.sessionId].sort(),
      );
      // the refused bet is on record as REJECTED and never became a round
      const rejected = await db.bet.findFirstOrThrow({ where: { sessionId: a.session.sessionId, clientBetId: 'too-much' } });
      expect(rejected).to.include({ status: 'REJECTED', cycleId: c3, rejectReason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY' });
      expect(await db.round.findUnique({ where: { id: rejected.roundId } })).to.equal(null);
      expect(h.wallet.transactions.filter((t) => t.playerRef === a.playerRef && t.type === 'bet').map((t) => t.amountMicro)).to.deep.equal([
        100_000n,
        100_000n,
        100_000n,
      ]);

      // connected.nonce is the next nonce
      const again = await Player.connect(h.baseUrl, a.session.sessionToken);
      players.push(again);
      expect(await again.waitFor('connected')).to.include({ nonce: 3, serverSeedHash: a.session.serverSeedHash });
    });
  });

  describe('proofs (contract 2.11, D2, D19)', () => {
    it('after termination a round proof reproduces under an independent verifier and rgs verify', async () => {
      // weights 3:5: a non-trivial split, so the side really depends on a
      const operator = await operatorWith({ lowWeight: 3n, highWeight: 5n });
      const clientSeed = 'proof-client-seed';
      const { player, session, connected } = await seated(operator, 10_000_000n, { clientSeed });
      expect(connected.clientSeed).to.equal(clientSeed);
      const used = new Set<string>();

      const bets: { betId: string; roundId: string }[] = [];
      for (let i = 0; i < 2; i += 1) {
        await openCycle(player, used);
        bets.push(await bet(player, 'LOW', '100000'));
        await player.waitFor('round_result', (p) => p.roundId === bets[i]!.roundId);
        await until('round SETTLED', async () => (await h.svc.db.round.findUniqueOrThrow({ where: { id: bets[i]!.roundId } })).state === 'SETTLED');
      }

      // D2: the seed of a live session is never revealed
      const early = await proofOf(operator, bets[0]!.roundId);
      expect(early.status, early.text).to.equal(404);
      expect(early.body.error).to.equal('seed_not_revealed');
      expect(Date.parse(early.body.revealableAfter)).to.equal(Date.parse(session.expiresAt));

      const ended = await terminate(operator, session.sessionId);
      expect(ended.status, ended.text).to.equal(200);
      expect(ended.body.voidedRoundIds).to.deep.equal([]);

      for (const [nonce, { roundId }] of bets.entries()) {
        const proof = await proofOf(operator, roundId);
        expect(proof.status, proof.text).to.equal(200);
        const body = proof.body;
        expect(body).to.include({
          roundId,
          gameCode: 'dice',
          rngVersion: 'dice-hmac-sha256-v1',
          mathVersion: 'dice-1.0.0',
          serverSeedHash: session.serverSeedHash,
          clientSeed,
          nonce,
          lowWeight: '3',
          highWeight: '5',
          sessionId: session.sessionId,
        });
        expect(body.serverSeed).to.match(/^[0-9a-f]{64}$/);
        // the commitment made at session create
        expect(sha256(body.serverSeed)).to.equal(session.serverSeedHash);
        const derived = deriveD2(body.serverSeed, clientSeed, nonce, 3n, 5n);
        expect(body.outcome).to.deep.equal({ type: 'DICE', diceValues: [derived.face], outcomeSum: derived.face, outcomeSide: derived.side });
        // and it is what the player was shown
        const shown = await player.waitFor('round_result', (p) => p.roundId === roundId);
        expect(shown).to.include({ nonce, side: derived.side, sum: derived.face, won: derived.side === 'LOW' });
        expect(shown.diceValues).to.deep.equal([derived.face]);
      }

      // rgs verify, as a player's auditor would run it; a tampered copy must fail
      const proof = (await proofOf(operator, bets[1]!.roundId)).body;
      const file = join(scratch, 'proof.json');
      const tampered = join(scratch, 'tampered.json');
      await writeFile(file, JSON.stringify(proof));
      // a claimed face other than the derived one always fails (a changed nonce can roll the
      // same face by chance)
      const otherFace = (proof.outcome.outcomeSum % 6) + 1;
      await writeFile(tampered, JSON.stringify({ ...proof, outcome: { ...proof.outcome, diceValues: [otherFace], outcomeSum: otherFace } }));
      const [good, bad] = await Promise.all([rgs(['verify', '--proof', file]), rgs(['verify', '--proof', tampered])]);
      expect(good.code, good.stderr + good.stdout).to.equal(0);
      expect(JSON.parse(good.stdout).valid).to.equal(true);
      expect(bad.code, bad.stderr + bad.stdout).to.equal(1);
    });
  });

  describe('seed rotation (D4, D5)', () => {
    it('is refused while a round is unsettled, then retires the seed, which is provable at once, and restarts the nonce', async () => {
      // 1:0 always rolls LOW, so the LOW bet wins and its credit goes through the settle worker
      const operator = await operatorWith({ lowWeight: 1n, highWeight: 0n });
      const { player, session, connected, playerRef } = await seated(operator, 10_000_000n);
      const db = h.svc.db;
      const used = new Set<string>();

      await openCycle(player, used);
      const first = await bet(player, 'LOW', '100000');
      expect(await player.request('rotate_seed', {})).to.deep.equal({ ok: false, reason: 'bet_in_progress' });
      expect(await db.seed.count({ where: { sessionId: session.sessionId } })).to.equal(1);

      // the round settles (its outcome is fixed) while the wallet has not yet taken the win
      // credit: the round is no longer in progress, so rotation is allowed (D4: refused
      // "while the session has an unsettled round")
      h.wallet.setFault('win', { kind: 'http', httpStatus: 503 });
      await player.waitFor('round_result', (p) => p.roundId === first.roundId);
      await until('a failed win attempt', async () => {
        const job = await db.walletJob.findFirst({ where: { betId: first.betId, endpoint: 'win' } });
        return job !== null && job.attempts >= 1 && job.completedAt === null;
      });
      expect((await db.round.findUniqueOrThrow({ where: { id: first.roundId } })).state).to.equal('SETTLED');

      const rotatedMessage = player.next('seed_rotated');
      const ack = await player.request('rotate_seed', { clientSeed: 'my-seed' });
      expect(ack.ok, JSON.stringify(ack)).to.equal(true);
      expect(ack).to.include({
        previousServerSeedHash: session.serverSeedHash,
        previousClientSeed: connected.clientSeed,
        lastNonce: 0,
        clientSeed: 'my-seed',
      });
      expect(ack.previousServerSeed).to.match(/^[0-9a-f]{64}$/);
      expect(sha256(ack.previousServerSeed)).to.equal(session.serverSeedHash);
      expect(ack.serverSeedHash).to.match(/^[0-9a-f]{64}$/).and.not.equal(session.serverSeedHash);
      expect(await rotatedMessage).to.include({ serverSeedHash: ack.serverSeedHash, clientSeed: 'my-seed', nonce: 0 });
      // the credit still lands, once
      h.wallet.setFault('win', null);
      expect((await betSettled(first.betId)).payoutMicro).to.equal(194_000n);
      expect(h.wallet.transactions.filter((t) => t.playerRef === playerRef).map((t) => [t.type, t.amountMicro])).to.deep.equal([
        ['bet', 100_000n],
        ['win', 194_000n],
      ]);

      // the rotated seed is retired: its round is provable right away
      const oldProof = await proofOf(operator, first.roundId);
      expect(oldProof.status, oldProof.text).to.equal(200);
      expect(oldProof.body).to.include({ serverSeed: ack.previousServerSeed, serverSeedHash: session.serverSeedHash, clientSeed: connected.clientSeed, nonce: 0 });
      const oldOutcome = deriveD2(ack.previousServerSeed, connected.clientSeed, 0, 1n, 0n);
      expect(oldProof.body.outcome).to.include({ outcomeSide: oldOutcome.side, outcomeSum: oldOutcome.face });

      // D2: a supplied clientSeed is 1..64 printable ASCII without ':'
      expect(await player.request('rotate_seed', { clientSeed: 'a:b' })).to.deep.equal({ ok: false, reason: 'invalid_payload' });
      expect(await player.request('rotate_seed', { clientSeed: 'x'.repeat(65) })).to.deep.equal({ ok: false, reason: 'invalid_payload' });
      const seeds = await db.seed.findMany({ where: { sessionId: session.sessionId }, orderBy: { createdAt: 'asc' } });
      expect(seeds.map((s) => [s.serverSeedHash, s.clientSeed, s.current, s.retiredAt !== null])).to.deep.equal([
        [session.serverSeedHash, connected.clientSeed, false, true],
        [ack.serverSeedHash, 'my-seed', true, false],
      ]);

      // the next round is nonce 0 under the new seed, which stays secret
      await openCycle(player, used);
      const next = await bet(player, 'HIGH', '100000');
      const result = await player.waitFor('round_result', (p) => p.roundId === next.roundId);
      expect(result.nonce).to.equal(0);
      const round = await until('round SETTLED', async () => {
        const row = await db.round.findUniqueOrThrow({ where: { id: next.roundId } });
        return row.state === 'SETTLED' && row;
      });
      expect(round).to.include({ nonce: 0, seedId: seeds[1]!.id });
      const hidden = await proofOf(operator, next.roundId);
      expect(hidden.status, hidden.text).to.equal(404);
      expect(hidden.body.error).to.equal('seed_not_revealed');
    });
  });

  describe('operator termination (contract 3.1, 3.3, 8.6, D7)', () => {
    // what the player and the wallet see when a real-money round is voided by termination
    async function expectVoidedByTermination(
      operator: TestOperator,
      seat: Awaited<ReturnType<typeof seated>>,
      placed: { betId: string; roundId: string },
      cycleId: string,
      startBalance: bigint,
    ) {
      const { player, session, playerRef } = seat;
      const response = await terminate(operator, session.sessionId);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.include({ sessionId: session.sessionId });
      expect(response.body.voidedRoundIds).to.deep.equal([placed.roundId]);

      const voided = await player.waitFor('round_voided');
      expect(voided).to.include({ roundId: placed.roundId, cycleId });
      expect(voided.reason).to.be.a('string').and.not.equal('');
      expect(await player.waitFor('session_ended')).to.include({ reason: 'terminated' });
      await player.waitFor('disconnect');
      const order = [index(player, 'round_voided'), index(player, 'session_ended'), index(player, 'disconnect')];
      expect(order).to.deep.equal([...order].sort((x, y) => x - y));
      // a terminated session cannot come back
      const refused = await Player.connect(h.baseUrl, session.sessionToken).then(
        () => 'connected',
        (err: Error) => err.message,
      );
      expect(refused).to.equal('session_terminated');

      const db = h.svc.db;
      const round = await db.round.findUniqueOrThrow({ where: { id: placed.roundId } });
      expect(round).to.include({ state: 'VOIDED', settled: true, outcomeSide: null });
      expect(round.voidedAt).to.be.instanceOf(Date);
      const betRow = await db.bet.findUniqueOrThrow({ where: { id: placed.betId } });
      expect(betRow.status).to.equal('VOIDED');
      expect(betRow.rollbackTransactionUuid).to.be.a('string');
      const pending = await db.pendingRoundBet.findUniqueOrThrow({ where: { betId: placed.betId } });
      expect(pending).to.include({ state: 'REFUNDED', resolutionReason: 'ROUND_VOIDED' });

      // the rollback reaches the wallet, referencing the debit, and the money is back
      const rollback = await until('the rollback in the wallet ledger', () =>
        h.wallet.transactions.find((t) => t.type === 'rollback' && t.playerRef === playerRef),
      );
      expect(rollback).to.include({ referenceTransactionUuid: betRow.betTransactionUuid, transactionUuid: betRow.rollbackTransactionUuid });
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(startBalance);
      expect(h.wallet.transactions.filter((t) => t.playerRef === playerRef).map((t) => t.type)).to.deep.equal(['bet', 'rollback']);
      const job = await until('the rollback job completed', async () => {
        const row = await db.walletJob.findUnique({ where: { transactionUuid: betRow.rollbackTransactionUuid! } });
        return row?.completedAt && row;
      });
      expect(job).to.include({ endpoint: 'rollback', betId: placed.betId });
      const ended = await db.session.findUniqueOrThrow({ where: { id: session.sessionId } });
      expect(ended.state).to.equal('TERMINATED');
      expect(ended.terminatedAt?.toISOString()).to.equal(response.body.terminatedAt);
    }

    it('during BETTING_OPEN voids the round and rolls the stake back', async () => {
      const operator = await operatorWith({ bettingWindowMs: 3000 });
      const seat = await seated(operator, 5_000_000n);
      const cycleId = await openCycle(seat.player, new Set());
      const placed = await bet(seat.player, 'LOW', '1000000');
      await seat.player.waitFor('balance_update', (p) => p.balanceMicro === '4000000');
      expect((await h.svc.db.round.findUniqueOrThrow({ where: { id: placed.roundId } })).state).to.equal('BETTING_OPEN');
      await expectVoidedByTermination(operator, seat, placed, cycleId, 5_000_000n);
    });

    it('during ROLLING voids the round, which never gets an outcome', async () => {
      const operator = await operatorWith({ bettingWindowMs: 800, rollingWindowMs: 2500 });
      const seat = await seated(operator, 5_000_000n);
      const cycleId = await openCycle(seat.player, new Set());
      const placed = await bet(seat.player, 'HIGH', '1000000');
      await seat.player.waitFor('round_state', (p) => p.cycleId === cycleId && p.phase === 'ROLLING');
      expect((await h.svc.db.round.findUniqueOrThrow({ where: { id: placed.roundId } })).state).to.equal('ROLLING');
      await expectVoidedByTermination(operator, seat, placed, cycleId, 5_000_000n);

      // the cycle rolls on without the voided round
      await until('the cycle past RESULT', async () => {
        const cycle = await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } });
        return cycle.phase === 'COOLDOWN' || cycle.phase === 'FINISHED';
      });
      const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: placed.roundId } });
      expect(round).to.include({ state: 'VOIDED', outcomeSide: null, outcomeSum: null });
      expect(seat.player.messages.filter((m) => m.event === 'round_result')).to.deep.equal([]);
      const proof = await proofOf(operator, placed.roundId);
      expect(proof.status, proof.text).to.equal(404);
      expect(proof.body.error).to.equal('round_not_settled');
    });

    it('during COOLDOWN after a settled round voids nothing', async () => {
      // lowWeight 1, highWeight 0 always rolls LOW: the bet wins
      const operator = await operatorWith({ bettingWindowMs: 800, cooldownMs: 4000, lowWeight: 1n, highWeight: 0n });
      const { player, session, playerRef } = await seated(operator, 5_000_000n);
      const cycleId = await openCycle(player, new Set());
      const placed = await bet(player, 'LOW', '1000000');
      await player.waitFor('round_state', (p) => p.cycleId === cycleId && p.phase === 'COOLDOWN');
      await betSettled(placed.betId);
      expect((await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).phase).to.equal('COOLDOWN');

      const response = await terminate(operator, session.sessionId);
      expect(response.status, response.text).to.equal(200);
      expect(response.body.voidedRoundIds).to.deep.equal([]);
      expect(await player.waitFor('session_ended')).to.include({ reason: 'terminated' });
      await player.waitFor('disconnect');
      expect(player.messages.filter((m) => m.event === 'round_voided')).to.deep.equal([]);

      const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: placed.roundId } });
      expect(round).to.include({ state: 'SETTLED', outcomeSide: 'LOW' });
      // rollback jobs are written with the void, before the terminate answers: there are none
      expect(await h.svc.db.walletJob.count({ where: { sessionId: session.sessionId, endpoint: 'rollback' } })).to.equal(0);
      expect(h.wallet.transactions.filter((t) => t.playerRef === playerRef).map((t) => [t.type, t.amountMicro])).to.deep.equal([
        ['bet', 1_000_000n],
        ['win', 1_940_000n],
      ]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(5_940_000n);
      // the session ended, so its seed is revealed
      expect((await proofOf(operator, placed.roundId)).status).to.equal(200);
    });

    it('of a demo session refunds the demo balance without any wallet call (D8)', async () => {
      const operator = await operatorWith({ bettingWindowMs: 3000 });
      const { player, session, playerRef, connected } = await seated(operator, 0n, { mode: 'demo' });
      expect(connected.balanceMicro).to.equal('100000000');
      const cycleId = await openCycle(player, new Set());
      const placed = await bet(player, 'HIGH', '1000000');
      await player.waitFor('balance_update', (p) => p.balanceMicro === '99000000');

      const response = await terminate(operator, session.sessionId);
      expect(response.status, response.text).to.equal(200);
      expect(response.body.voidedRoundIds).to.deep.equal([placed.roundId]);
      expect(await player.waitFor('round_voided')).to.include({ roundId: placed.roundId, cycleId });
      expect(await player.waitFor('session_ended')).to.include({ reason: 'terminated' });
      await player.waitFor('disconnect');

      const db = h.svc.db;
      expect((await db.session.findUniqueOrThrow({ where: { id: session.sessionId } })).demoBalanceMicro).to.equal(100_000_000n);
      expect((await db.round.findUniqueOrThrow({ where: { id: placed.roundId } })).state).to.equal('VOIDED');
      expect((await db.bet.findUniqueOrThrow({ where: { id: placed.betId } })).status).to.equal('VOIDED');
      expect(await db.pendingRoundBet.findUniqueOrThrow({ where: { betId: placed.betId } })).to.include({
        state: 'REFUNDED',
        resolutionReason: 'ROUND_VOIDED',
      });
      expect(await db.walletJob.count({ where: { sessionId: session.sessionId } })).to.equal(0);
      expect(await db.walletCall.count({ where: { sessionId: session.sessionId } })).to.equal(0);
      expect(h.wallet.requests.filter((r) => (r.body as { playerRef?: string } | undefined)?.playerRef === playerRef)).to.deep.equal([]);
    });
  });

  describe('the engine clock (D1)', () => {
    it('broadcasts each phase once per engine room, in order, stops when nobody is left and starts again', async () => {
      const operator = await operatorWith({ bettingWindowMs: 800, rollingWindowMs: 300, cooldownMs: 300 });
      const first = await seated(operator, 1_000_000n);
      const second = await seated(operator, 1_000_000n);
      // the second player joined the room before `connected` named the current cycle: a
      // cycle it then sees open for betting was created after it joined, and both see it whole
      const skip = second.connected.roundState?.cycleId as string | undefined;
      const full = await second.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && p.cycleId !== skip);
      const following = await first.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && p.cycleId !== skip && p.cycleId !== full.cycleId);
      await second.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && p.cycleId === following.cycleId);

      const windows: Record<string, number> = { BETTING_OPEN: 800, ROLLING: 300, COOLDOWN: 300 };
      for (const { player } of [first, second]) {
        const states = player.messages.filter((m) => m.event === 'round_state').map((m) => m.payload);
        // no phase of any cycle is announced twice
        const keys = states.map((s) => `${s.cycleId}/${s.phase}`);
        expect(keys).to.deep.equal([...new Set(keys)]);
        const ofFull = states.filter((s) => s.cycleId === full.cycleId);
        const phases = ofFull.map((s) => s.phase);
        expect(phases.filter((p) => p !== 'PENDING')).to.deep.equal(['BETTING_OPEN', 'ROLLING', 'RESULT', 'COOLDOWN']);
        expect(phases.indexOf('PENDING')).to.be.at.most(0);
        for (const state of ofFull) {
          expect(state.ts).to.be.a('string');
          if (state.phase === 'RESULT') expect(state.phaseEndsAt).to.equal(null);
          const window = windows[state.phase];
          if (window !== undefined) {
            const left = Date.parse(state.phaseEndsAt) - Date.parse(state.ts);
            expect(left, `${state.phase} ends ${left} ms after it is announced`).to.be.within(window - 500, window + 50);
          }
        }
        // then the next cycle, under a new cycleId, opens for betting
        const afterFull = states.slice(states.findIndex((s) => s.cycleId === full.cycleId && s.phase === 'COOLDOWN') + 1);
        expect(afterFull.find((s) => s.phase === 'BETTING_OPEN')?.cycleId).to.equal(following.cycleId);
      }

      // everyone leaves: the clock stops after the cycle
      first.player.close();
      second.player.close();
      const key = { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' };
      await until(
        'the engine to stop',
        async () => {
          const engine = await h.svc.db.engine.findUniqueOrThrow({ where: { operatorId_gameCode_currency: key } });
          return !engine.running && engine.currentCycleId === null;
        },
        5000,
      );
      // the last cycle the engine ran before it stopped. A node that has not yet seen a closed
      // socket go may start the engine again meanwhile (its players still look present): that
      // start is a new cycle too, so the stop is read as the last finished cycle's number, not
      // as a count of the cycles taken a moment later
      const finished = await h.svc.db.cycle.findMany({ where: { ...key, phase: 'FINISHED' }, select: { number: true } });
      const lastFinished = Math.max(...finished.map((c) => c.number ?? 0));

      // a new connection starts it again with a new cycle
      const third = await seated(operator, 1_000_000n);
      const restarted = third.connected.roundState;
      expect(restarted).to.not.equal(null);
      const cycle = await h.svc.db.cycle.findUniqueOrThrow({ where: { id: restarted.cycleId } });
      expect(cycle.number).to.be.greaterThan(lastFinished);
      expect(cycle.phase).to.not.equal('FINISHED');
      const engine = await h.svc.db.engine.findUniqueOrThrow({ where: { operatorId_gameCode_currency: key } });
      expect(engine).to.include({ running: true, currentCycleId: restarted.cycleId });
      await third.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && p.cycleId === restarted.cycleId);
    });
  });

  describe('weight snapshot (contract 8.6)', () => {
    it('a weight change during a cycle applies from the next cycle', async () => {
      // 1:0 always rolls LOW, 0:1 always HIGH
      const operator = await operatorWith({ bettingWindowMs: 1500, lowWeight: 1n, highWeight: 0n });
      const a = await seated(operator, 5_000_000n);
      const b = await seated(operator, 5_000_000n);
      const used = new Set<string>();

      const c1 = await openCycle(a.player, used);
      const a1 = await bet(a.player, 'HIGH', '100000');
      await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { lowWeight: 0n, highWeight: 1n });
      // a bet accepted after the change still belongs to the cycle that snapshotted 1:0
      const b1 = await bet(b.player, 'HIGH', '100000');
      expect((await a.player.waitFor('round_result', (p) => p.roundId === a1.roundId)).side).to.equal('LOW');
      expect((await b.player.waitFor('round_result', (p) => p.roundId === b1.roundId)).side).to.equal('LOW');

      const c2 = await openCycle(a.player, used);
      const a2 = await bet(a.player, 'HIGH', '100000');
      expect(await a.player.waitFor('round_result', (p) => p.roundId === a2.roundId)).to.include({ side: 'HIGH', won: true });

      const rounds = await h.svc.db.round.findMany({ where: { id: { in: [a1.roundId, b1.roundId, a2.roundId] } } });
      const weights = Object.fromEntries(rounds.map((r) => [r.id, [r.cycleId, r.lowWeight, r.highWeight]]));
      expect(weights).to.deep.equal({
        [a1.roundId]: [c1, 1n, 0n],
        [b1.roundId]: [c1, 1n, 0n],
        [a2.roundId]: [c2, 0n, 1n],
      });
    });
  });
});
