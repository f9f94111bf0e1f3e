import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer, until, type SeatedPlayer } from '../../support/game.js';
import type { Player } from '../../support/player.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// D28: how a session ends on the player channel. A bet's ack comes before the session_ended
// that the same wallet answer causes; every session_ended reveals the session's retired
// seed (the one the proof endpoint then shows); rate_limited is a refusal like the 8.2 codes.

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const STAKE = '1000000';

// a place_bet whose ack is recorded among the player's messages, where it arrived
function placeRecorded(player: Player, payload: Record<string, unknown>): Promise<unknown> {
  return new Promise((resolve) => {
    player.socket.timeout(10_000).emit('place_bet', payload, (err: Error | null, ack: unknown) => {
      const answer = err ? { lost: err.message } : ack;
      player.messages.push({ event: 'ack', payload: answer });
      resolve(answer);
    });
  });
}

const eventsOf = (player: Player, events: string[]) => player.messages.map((m) => m.event).filter((e) => events.includes(e));

function endsTheSession(handoff: 'local' | 'queue') {
  describe(`a wallet answer that ends the session (bets handed off: ${handoff})`, function () {
    this.timeout(30_000);
    let h: Harness;
    const players: Player[] = [];
    before(async () => {
      h = await startHarness({ BET_HANDOFF: handoff }, ROLE_NAMES);
    });
    afterEach(() => {
      for (const player of players.splice(0)) player.close();
    });
    after(() => h.close());

    for (const status of ['RS_ERROR_USER_DISABLED', 'RS_ERROR_TOKEN_EXPIRED', 'RS_ERROR_INVALID_TOKEN']) {
      it(`${status}: the ack {ok:false}, then session_ended with the retired seed, then the disconnect`, async () => {
        const operator = await operatorWith(h, { bettingWindowMs: 3000 });
        const seat = await seatPlayer(h, operator, 10_000_000n);
        players.push(seat.player);
        await bettingWindowWithRoom(seat.player, 1500);
        h.wallet.setFault('bet', { kind: 'status', status }, 1);
        const ack = await placeRecorded(seat.player, { side: 'LOW', amountMicro: STAKE, clientBetId: 'ends' });
        await seat.player.waitFor('disconnect');
        expect(ack).to.deep.equal({ ok: false, reason: `wallet_rejected:${status}` });
        expect(eventsOf(seat.player, ['bet_rejected', 'ack', 'session_ended', 'disconnect'])).to.deep.equal([
          'bet_rejected',
          'ack',
          'session_ended',
          'disconnect',
        ]);
        const ended = await seat.player.waitFor('session_ended');
        expect(ended.reason).to.equal(`wallet_status:${status}`);
        expect(ended.serverSeedHash).to.equal(seat.connected.serverSeedHash);
        expect(sha256(ended.serverSeed)).to.equal(ended.serverSeedHash);
        const seed = await h.svc.db.seed.findFirstOrThrow({ where: { sessionId: seat.sessionId } });
        expect(seed.retiredAt, 'the revealed seed is retired').to.not.equal(null);
      });
    }
  });
}

endsTheSession('local');
endsTheSession('queue');

describe('session_ended reveals the retired seed; rate_limited is a refusal (D28)', function () {
  this.timeout(30_000);
  let h: Harness;
  const players: Player[] = [];
  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  afterEach(() => {
    for (const player of players.splice(0)) player.close();
  });
  after(() => h.close());

  async function seat(operator: TestOperator): Promise<SeatedPlayer> {
    const seated = await seatPlayer(h, operator, 10_000_000n);
    players.push(seated.player);
    return seated;
  }

  it('terminated: session_ended carries the seed the proof endpoint reveals for the last round', async () => {
    const operator = await operatorWith(h);
    const { player, sessionId, connected } = await seat(operator);
    await bettingWindowWithRoom(player, 400);
    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: STAKE });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    await until('the round settled', async () => (await h.svc.db.round.findUnique({ where: { id: ack.roundId } }))?.state === 'SETTLED');

    const terminated = await operator.request('POST', `/v1/session/${sessionId}/terminate`, {});
    expect(terminated.status, terminated.text).to.equal(200);
    const ended = await player.waitFor('session_ended');
    await player.waitFor('disconnect');
    expect(ended).to.include({ reason: 'terminated', serverSeedHash: connected.serverSeedHash });
    expect(sha256(ended.serverSeed)).to.equal(connected.serverSeedHash);
    const proof = await operator.request('GET', `/v1/rounds/${ack.roundId}/proof`);
    expect(proof.status, proof.text).to.equal(200);
    expect(proof.body).to.include({ serverSeed: ended.serverSeed, serverSeedHash: ended.serverSeedHash });
  });

  it('expired: the bet that finds the session expired is refused, then session_ended carries the retired seed', async () => {
    const operator = await operatorWith(h);
    const { player, sessionId, connected } = await seat(operator);
    const shift = 61 * 60_000;
    h.shiftClock(shift);
    try {
      const ack = await placeRecorded(player, { side: 'LOW', amountMicro: STAKE });
      await player.waitFor('disconnect');
      expect(ack).to.deep.equal({ ok: false, reason: 'session_expired' });
      expect(eventsOf(player, ['ack', 'session_ended', 'disconnect'])).to.deep.equal(['ack', 'session_ended', 'disconnect']);
    } finally {
      h.shiftClock(-shift);
    }
    const ended = await player.waitFor('session_ended');
    expect(ended).to.include({ reason: 'expired', serverSeedHash: connected.serverSeedHash });
    expect(sha256(ended.serverSeed)).to.equal(connected.serverSeedHash);
    expect((await h.svc.db.seed.findFirstOrThrow({ where: { sessionId } })).retiredAt).to.not.equal(null);
  });

  it('a rotated seed: session_ended reveals the current seed, not the one already revealed', async () => {
    const operator = await operatorWith(h);
    const { player, sessionId } = await seat(operator);
    const rotated = await player.request('rotate_seed', { clientSeed: 'mine' });
    expect(rotated.ok, JSON.stringify(rotated)).to.equal(true);
    const terminated = await operator.request('POST', `/v1/session/${sessionId}/terminate`, {});
    expect(terminated.status, terminated.text).to.equal(200);
    const ended = await player.waitFor('session_ended');
    expect(ended.serverSeedHash).to.equal(rotated.serverSeedHash);
    expect(sha256(ended.serverSeed)).to.equal(rotated.serverSeedHash);
  });

  it('rate_limited: a place_bet over the socket budget is refused on the ack and on bet_rejected; rotate_seed too', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 3000 });
    const { player } = await seat(operator);
    const acks = await Promise.all(
      Array.from({ length: 20 }, (_, i) => player.request('place_bet', { side: 'LOW', amountMicro: 'x', clientBetId: `burst-${i}` })),
    );
    const limited = acks.flatMap((ack, i) => (ack.reason === 'rate_limited' ? [`burst-${i}`] : []));
    expect(limited.length, JSON.stringify(acks)).to.be.greaterThan(0);
    expect(acks.every((ack) => ack.ok === false && ['rate_limited', 'invalid_payload'].includes(ack.reason)), JSON.stringify(acks)).to.equal(true);
    // D28: rate_limited joins the 8.2 codes, so bet_rejected tells it too, with the clientBetId
    for (const clientBetId of limited) {
      expect(await player.waitFor('bet_rejected', (p) => p.clientBetId === clientBetId)).to.include({ reason: 'rate_limited' });
    }
    const rotations = await Promise.all(Array.from({ length: 12 }, () => player.request('rotate_seed', {})));
    expect(rotations.some((r) => r.ok === false && r.reason === 'rate_limited'), JSON.stringify(rotations)).to.equal(true);
  });
});
