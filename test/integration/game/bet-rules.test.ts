import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { inspect } from 'node:util';
import type { GameConfigValues } from '../../../src/shared/game/operators/game-config.js';
import { signSessionToken } from '../../../src/shared/game/sessions/token.js';
import type { RecordedRequest } from '../../../src/simulator/wallet-simulator.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { operatorWith as sharedOperatorWith } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// The bet rules of contract 8.2 (with 8.3 / D14 for responsible gambling, D4 for the channel,
// D8 for demo mode, D13 for uncertain debits) through the real Socket.IO channel: every
// bet_rejected reason, on the ack and on the bet_rejected message, the money the wallet
// simulator saw (or did not see) and the rows left behind.
describe('bet rules (contract 8.2) over the player channel', function () {
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

  const FORCE_LOW = { lowWeight: 1n, highWeight: 0n };
  const FORCE_HIGH = { lowWeight: 0n, highWeight: 1n };

  const operatorWith = (config: Partial<GameConfigValues> = {}) => sharedOperatorWith(h, config);

  type Seat = { player: Player; playerRef: string; sessionId: string; token: string; connected: any };

  async function seat(operator: TestOperator, options: { balance?: bigint; body?: Record<string, unknown> } = {}): Promise<Seat> {
    const body = operator.sessionBody(options.body);
    const playerRef = body.playerRef as string;
    if (body.mode !== 'demo' && options.balance !== undefined) h.wallet.setBalance(playerRef, 'EUR', options.balance);
    const launch = await operator.request('POST', '/v1/session', body);
    expect(launch.status, launch.text).to.equal(200);
    const player = await connect(launch.body.sessionToken);
    const connected = await player.waitFor('connected');
    return { player, playerRef, sessionId: launch.body.sessionId, token: launch.body.sessionToken, connected };
  }

  async function connect(token: string): Promise<Player> {
    const player = await Player.connect(h.baseUrl, token);
    players.push(player);
    return player;
  }

  // the connect_error message of a refused handshake (D4)
  async function refusal(token: unknown): Promise<string> {
    let player: Player;
    try {
      player = await Player.connect(h.baseUrl, token as string);
    } catch (err) {
      return (err as Error).message;
    }
    player.close();
    throw new Error('the connection was accepted');
  }

  // a BETTING_OPEN window (seen or to come) with at least minRemainingMs left on the service clock
  const bettingOpen = (player: Player, minRemainingMs = 400) =>
    player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && Date.parse(p.phaseEndsAt) - h.svc.now().getTime() > minRemainingMs);

  const requestsOf = (playerRef: string): RecordedRequest[] =>
    h.wallet.requests.filter((r) => (r.body as { playerRef?: unknown } | undefined)?.playerRef === playerRef);
  const endpointsOf = (playerRef: string) => requestsOf(playerRef).map((r) => r.endpoint);
  const statusOf = (request: RecordedRequest | undefined) =>
    request && typeof request.response === 'object' ? request.response.status : request?.response;

  // bounded DB poll
  async function eventually<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${inspect(value)}`);
      await delay(50);
    }
  }

  // the clientBetId a bet_rejected must echo: a non-empty string one
  const clientBetIdOf = (payload: unknown): string | undefined => {
    const id = payload !== null && typeof payload === 'object' ? (payload as { clientBetId?: unknown }).clientBetId : undefined;
    return typeof id === 'string' && id !== '' ? id : undefined;
  };

  // place_bet refused with `reason`: on the ack, and on exactly one bet_rejected message that
  // echoes the clientBetId when one was given (D4)
  async function rejected(player: Player, payload: unknown, reason: string) {
    const before = player.messages.length;
    const ack = await player.request('place_bet', payload);
    expect(ack, `ack of ${inspect(payload)}`).to.deep.equal({ ok: false, reason });
    const clientBetId = clientBetIdOf(payload);
    const message = await player.waitFor('bet_rejected', () => true, 5_000, before);
    expect(message.reason, `bet_rejected of ${inspect(payload)}`).to.equal(reason);
    if (clientBetId === undefined) expect(message).to.not.have.property('clientBetId');
    else expect(message.clientBetId).to.equal(clientBetId);
    expect(Number.isNaN(Date.parse(message.ts))).to.equal(false);
    expect(player.messages.slice(before).filter((m) => m.event === 'bet_rejected'), `one bet_rejected for ${inspect(payload)}`).to.have.length(1);
    return message;
  }

  async function accepted(player: Player, payload: Record<string, unknown>) {
    const ack = await player.request('place_bet', payload);
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    return ack as { ok: true; betId: string; roundId: string };
  }

  const settledRound = (roundId: string) =>
    eventually(`round ${roundId} settled`, () => h.svc.db.round.findUnique({ where: { id: roundId } }), (r) => r?.state === 'SETTLED');

  describe('refusals before any wallet call', () => {
    it('bet_out_of_range: zero, below min, above max (malformed amounts: invalid_payload, D24); the bounds themselves are allowed', async () => {
      const operator = await operatorWith({ minBetMicro: 50_000n, maxBetMicro: 2_000_000n, bettingWindowMs: 2000, ...FORCE_HIGH });
      const { player, playerRef, sessionId, connected } = await seat(operator, { balance: 5_000_000n });
      expect(connected.config).to.include({ minBetMicro: '50000', maxBetMicro: '2000000' });
      await bettingOpen(player, 1000);
      const calls = requestsOf(playerRef).length;

      await rejected(player, { side: 'LOW', amountMicro: 49_999, clientBetId: 'below-min' }, 'bet_out_of_range');
      await rejected(player, { side: 'LOW', amountMicro: '2000001', clientBetId: 'above-max' }, 'bet_out_of_range');
      // contract 8.2, D24: a zero stake is well-formed, and out of range in every game
      await rejected(player, { side: 'HIGH', amountMicro: '0', clientBetId: 'zero' }, 'bet_out_of_range');
      await rejected(player, { side: 'HIGH', amountMicro: 0 }, 'bet_out_of_range');
      // D24: what is not a stake string is invalid_payload, before any statement runs
      await rejected(player, { side: 'LOW', amountMicro: '00', clientBetId: 'leading-zero' }, 'invalid_payload');
      await rejected(player, { side: 'LOW', amountMicro: '-1', clientBetId: 'negative-string' }, 'invalid_payload');
      await rejected(player, { side: 'LOW', amountMicro: '1.5', clientBetId: 'decimal-string' }, 'invalid_payload');
      await rejected(player, { side: 'LOW', amountMicro: -5 }, 'invalid_payload');
      expect(requestsOf(playerRef)).to.have.length(calls);
      expect(await h.svc.db.bet.count({ where: { sessionId } })).to.equal(0);

      // the window was open all along: the maximum itself is a valid stake (8.2 rule 3)
      const ack = await accepted(player, { side: 'LOW', amountMicro: 2_000_000 });
      expect(endpointsOf(playerRef).filter((e) => e === 'bet')).to.have.length(1);
      await player.waitFor('round_result', (p) => p.roundId === ack.roundId);
      await settledRound(ack.roundId);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(3_000_000n);
      expect(h.wallet.violations).to.deep.equal([]);
    });

    it('phase_not_open: a bet while the cycle is ROLLING or in COOLDOWN', async () => {
      const operator = await operatorWith({ bettingWindowMs: 500, rollingWindowMs: 700, cooldownMs: 700 });
      const { player, playerRef, sessionId } = await seat(operator, { balance: 5_000_000n });
      const calls = requestsOf(playerRef).length;

      const rolling = await player.waitFor('round_state', (p) => p.phase === 'ROLLING');
      await rejected(player, { side: 'LOW', amountMicro: '100000', clientBetId: 'while-rolling' }, 'phase_not_open');
      const cooling = await player.waitFor('round_state', (p) => p.phase === 'COOLDOWN' && p.cycleId === rolling.cycleId);
      expect(cooling.cycleId).to.equal(rolling.cycleId);
      await rejected(player, { side: 'HIGH', amountMicro: 100000, clientBetId: 'while-cooling' }, 'phase_not_open');

      expect(requestsOf(playerRef)).to.have.length(calls);
      expect(await h.svc.db.bet.count({ where: { sessionId } })).to.equal(0);
      expect(h.wallet.violations).to.deep.equal([]);
    });

    it('already_bet_this_round: a second bet in the cycle, and a concurrent double submit', async () => {
      const operator = await operatorWith({ bettingWindowMs: 1500, ...FORCE_HIGH });
      const { player, playerRef, sessionId } = await seat(operator, { balance: 5_000_000n });

      const open = await bettingOpen(player, 800);
      const first = await accepted(player, { side: 'LOW', amountMicro: '100000', clientBetId: 'first' });
      const betCalls = () => endpointsOf(playerRef).filter((e) => e === 'bet').length;
      expect(betCalls()).to.equal(1);
      await rejected(player, { side: 'HIGH', amountMicro: '200000', clientBetId: 'second' }, 'already_bet_this_round');
      expect(betCalls()).to.equal(1);
      expect(await h.svc.db.bet.count({ where: { sessionId, cycleId: open.cycleId } })).to.equal(1);
      await player.waitFor('round_result', (p) => p.roundId === first.roundId);

      // two place_bet in flight at once: the database lets exactly one through
      const next = await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && p.cycleId !== open.cycleId);
      const before = player.messages.length;
      const acks = await Promise.all([
        player.request('place_bet', { side: 'LOW', amountMicro: '300000', clientBetId: 'twin-a' }),
        player.request('place_bet', { side: 'LOW', amountMicro: '300000', clientBetId: 'twin-b' }),
      ]);
      const winner = acks.find((a) => a.ok === true);
      const loser = acks.find((a) => a.ok !== true);
      expect(winner, JSON.stringify(acks)).to.not.equal(undefined);
      expect(loser).to.deep.equal({ ok: false, reason: 'already_bet_this_round' });
      const losingId = acks[0] === loser ? 'twin-a' : 'twin-b';
      const message = await player.waitFor('bet_rejected', () => true, 5_000, before);
      expect(message).to.include({ reason: 'already_bet_this_round', clientBetId: losingId });
      const rows = await h.svc.db.bet.findMany({ where: { sessionId, cycleId: next.cycleId } });
      expect(rows.map((r) => [r.id, r.status])).to.deep.equal([[winner.betId, 'ACCEPTED']]);
      expect(betCalls()).to.equal(2);

      await player.waitFor('round_result', (p) => p.roundId === winner.roundId);
      await settledRound(winner.roundId);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(4_600_000n);
      expect(h.wallet.violations).to.deep.equal([]);
    });
  });

  describe('rg_limit_reached (8.3, D14): checked before any wallet call', () => {
    it('dailyWagerMicro: the stake that would pass the limit is refused, the one that reaches it is not', async () => {
      // a stake step of one micro-unit (D46), so that a stake can pass the limit by one
      const operator = await operatorWith({ bettingWindowMs: 1200, stakeStepMicro: 1n, ...FORCE_HIGH });
      const { player, playerRef, sessionId } = await seat(operator, { balance: 5_000_000n, body: { rgLimits: { dailyWagerMicro: '1000000' } } });
      const open = await bettingOpen(player, 700);
      const calls = requestsOf(playerRef).length;
      await rejected(player, { side: 'LOW', amountMicro: '1000001', clientBetId: 'over-wager' }, 'rg_limit_reached');
      expect(requestsOf(playerRef)).to.have.length(calls);
      const first = await accepted(player, { side: 'LOW', amountMicro: '600000' });
      await player.waitFor('round_result', (p) => p.roundId === first.roundId);
      await settledRound(first.roundId);

      // the settled 600000 still counts as wagered: 400000 more reaches the limit, 400001 passes it
      await player.waitFor(
        'round_state',
        (p) => p.phase === 'BETTING_OPEN' && p.cycleId !== open.cycleId && Date.parse(p.phaseEndsAt) - h.svc.now().getTime() > 700,
      );
      const after = requestsOf(playerRef).length;
      await rejected(player, { side: 'LOW', amountMicro: '400001', clientBetId: 'wager-spent' }, 'rg_limit_reached');
      expect(requestsOf(playerRef)).to.have.length(after);
      const last = await accepted(player, { side: 'LOW', amountMicro: '400000' });
      await player.waitFor('round_result', (p) => p.roundId === last.roundId);
      await settledRound(last.roundId);
      expect(await h.svc.db.bet.count({ where: { sessionId } })).to.equal(2);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(4_000_000n);
      expect(h.wallet.violations).to.deep.equal([]);
    });

    it("dailyLossMicro counts the same playerRef's settled losses and unsettled stakes across sessions (D14)", async () => {
      const operator = await operatorWith({ bettingWindowMs: 1500, stakeStepMicro: 1n, ...FORCE_HIGH });
      const a = await seat(operator, { balance: 5_000_000n });
      const playerRef = a.playerRef;

      // session A: a settled loss of 300000
      const open = await bettingOpen(a.player, 700);
      const lost = await accepted(a.player, { side: 'LOW', amountMicro: '300000' });
      const result = await a.player.waitFor('round_result', (p) => p.roundId === lost.roundId);
      expect(result).to.include({ won: false, payoutMicro: '0' });
      await settledRound(lost.roundId);

      // session B of the same player, with a loss limit of 1000000
      const b = await seat(operator, { body: { playerRef, rgLimits: { dailyLossMicro: '1000000' } } });
      // next cycle: A stakes 300000 more (accepted, not settled: a potential loss)
      await a.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && p.cycleId !== open.cycleId && Date.parse(p.phaseEndsAt) - h.svc.now().getTime() > 700);
      const pending = await accepted(a.player, { side: 'LOW', amountMicro: '300000' });
      const calls = requestsOf(playerRef).length;
      await rejected(b.player, { side: 'LOW', amountMicro: '400001', clientBetId: 'over-loss' }, 'rg_limit_reached');
      expect(requestsOf(playerRef)).to.have.length(calls);
      expect(await h.svc.db.bet.count({ where: { sessionId: b.sessionId } })).to.equal(0);
      // 300000 lost + 300000 at stake + 400000 = the limit exactly
      const last = await accepted(b.player, { side: 'LOW', amountMicro: '400000' });

      await settledRound(pending.roundId);
      await settledRound(last.roundId);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(4_000_000n);
      expect(h.wallet.violations).to.deep.equal([]);
    });

    it('sessionTimeSeconds: once the session is older than the limit, bets are refused', async () => {
      const operator = await operatorWith({ bettingWindowMs: 1000, ...FORCE_HIGH });
      const { player, playerRef, sessionId } = await seat(operator, { balance: 5_000_000n, body: { rgLimits: { sessionTimeSeconds: 60 } } });
      const open = await bettingOpen(player, 500);
      const ack = await accepted(player, { side: 'LOW', amountMicro: '100000' });
      await player.waitFor('round_result', (p) => p.roundId === ack.roundId);
      await settledRound(ack.roundId);

      // 61 s on the service clock: past the 60 s limit, well inside the token's 60 minutes
      const shift = 61_000;
      h.shiftClock(shift);
      try {
        const late = await player.waitFor(
          'round_state',
          (p) => p.phase === 'BETTING_OPEN' && p.cycleId !== open.cycleId && Date.parse(p.phaseEndsAt) - h.svc.now().getTime() > 400,
        );
        expect(late.cycleId).to.not.equal(open.cycleId);
        const calls = requestsOf(playerRef).length;
        await rejected(player, { side: 'LOW', amountMicro: '100000', clientBetId: 'too-long' }, 'rg_limit_reached');
        expect(requestsOf(playerRef)).to.have.length(calls);
      } finally {
        h.shiftClock(-shift);
      }
      expect(await h.svc.db.bet.count({ where: { sessionId } })).to.equal(1);
      expect(h.wallet.violations).to.deep.equal([]);
    });
  });

  describe('the session behind the socket (8.2 rule 1, D4)', () => {
    it('session_terminated: the operator terminates, the socket is told and closed, the token no longer connects', async () => {
      const operator = await operatorWith();
      const { player, playerRef, sessionId, token } = await seat(operator, { balance: 5_000_000n });
      const calls = requestsOf(playerRef).length;

      const terminated = await operator.request('POST', `/v1/session/${sessionId}/terminate`, { reason: 'responsible gambling' });
      expect(terminated.status, terminated.text).to.equal(200);
      expect(terminated.body).to.include({ sessionId });
      expect(terminated.body.voidedRoundIds).to.deep.equal([]);
      const ended = await player.waitFor('session_ended');
      expect(ended.reason).to.equal('terminated');
      await player.waitFor('disconnect');
      expect(player.messages.map((m) => m.event).filter((e) => e !== 'round_state').slice(-2)).to.deep.equal(['session_ended', 'disconnect']);
      expect(player.messages.filter((m) => m.event === 'session_ended')).to.have.length(1);
      expect(player.socket.connected).to.equal(false);

      expect(await refusal(token)).to.equal('session_terminated');
      expect(requestsOf(playerRef)).to.have.length(calls);
      expect(await h.svc.db.bet.count({ where: { sessionId } })).to.equal(0);
      const session = await h.svc.db.session.findUniqueOrThrow({ where: { id: sessionId } });
      expect(session.state).to.equal('TERMINATED');
    });

    it('session_expired: a bet after the token expired is refused and ends the session; a new handshake is refused', async () => {
      const operator = await operatorWith();
      const { player, playerRef, sessionId, token } = await seat(operator, { balance: 5_000_000n });
      const calls = requestsOf(playerRef).length;

      const shift = 61 * 60_000;
      h.shiftClock(shift);
      try {
        await rejected(player, { side: 'LOW', amountMicro: '100000', clientBetId: 'after-exp' }, 'session_expired');
        const ended = await player.waitFor('session_ended');
        expect(ended.reason).to.equal('expired');
        await player.waitFor('disconnect');
        // D4: the rejection, then session_ended (once), then the disconnect
        expect(player.messages.map((m) => m.event).filter((e) => e !== 'round_state').slice(-3)).to.deep.equal([
          'bet_rejected',
          'session_ended',
          'disconnect',
        ]);
        expect(await refusal(token)).to.equal('session_expired');
      } finally {
        h.shiftClock(-shift);
      }
      expect(requestsOf(playerRef)).to.have.length(calls);
      expect(await h.svc.db.bet.count({ where: { sessionId } })).to.equal(0);
      const session = await h.svc.db.session.findUniqueOrThrow({ where: { id: sessionId } });
      expect(session.state).to.equal('EXPIRED');
    });

    it('session_not_found / invalid_token: a token for no session, a forged or garbage token never connects', async () => {
      const operator = await h.onboard();
      const nowSeconds = Math.floor(h.svc.now().getTime() / 1000);
      const claims = {
        sub: 'player-nobody',
        operatorId: operator.operatorId,
        sessionId: randomUUID(),
        currency: 'EUR',
        jurisdiction: 'MT',
        lang: 'en',
        mode: 'real' as const,
        rgLimits: {},
        iat: nowSeconds,
        exp: nowSeconds + 3600,
      };
      expect(await refusal(signSessionToken(h.svc.config.jwtSecret, claims))).to.equal('invalid_token');
      expect(await refusal(signSessionToken('another-secret-of-at-least-32-characters!!', claims))).to.equal('invalid_token');
      expect(await refusal('garbage.not-a.jwt')).to.equal('invalid_token');
      expect(await refusal(undefined)).to.equal('invalid_token');
      expect(h.wallet.requests.filter((r) => (r.body as { operatorId?: unknown } | undefined)?.operatorId === operator.operatorId)).to.deep.equal([]);
    });
  });

  describe('the wallet says no (8.2 rule 6, 7.1, D13)', () => {
    it('wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY: REJECTED, no rollback; a REJECTED attempt is not a bet of the round', async () => {
      const operator = await operatorWith({ bettingWindowMs: 1500, ...FORCE_HIGH });
      const { player, playerRef, sessionId } = await seat(operator, { balance: 300_000n });
      await bettingOpen(player, 800);

      await rejected(player, { side: 'LOW', amountMicro: '500000', clientBetId: 'too-poor' }, 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY');
      const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId, clientBetId: 'too-poor' } });
      expect(bet).to.include({ status: 'REJECTED', rejectReason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY', rollbackTransactionUuid: null });
      expect(await h.svc.db.walletJob.count({ where: { betId: bet.id } })).to.equal(0);
      expect(await h.svc.db.round.findUnique({ where: { id: bet.roundId } })).to.equal(null);
      expect(await h.svc.db.pendingRoundBet.findUnique({ where: { betId: bet.id } })).to.equal(null);
      const betRequests = requestsOf(playerRef).filter((r) => r.endpoint === 'bet');
      expect(betRequests.map((r) => (r.body as { transactionUuid: string }).transactionUuid)).to.deep.equal([bet.betTransactionUuid]);
      expect(statusOf(betRequests[0])).to.equal('RS_ERROR_NOT_ENOUGH_MONEY');
      const audit = await h.svc.db.walletCall.findMany({ where: { transactionUuid: bet.betTransactionUuid } });
      expect(audit.map((c) => [c.endpoint, c.status])).to.deep.equal([['bet', 'RS_ERROR_NOT_ENOUGH_MONEY']]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(300_000n);

      // rule 4 counts bets, not refused attempts: an affordable bet in the same cycle goes through
      const ack = await accepted(player, { side: 'LOW', amountMicro: '200000', clientBetId: 'affordable' });
      await player.waitFor('round_result', (p) => p.roundId === ack.roundId);
      await settledRound(ack.roundId);
      expect(endpointsOf(playerRef).filter((e) => e === 'rollback')).to.deep.equal([]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(100_000n);
      expect(h.wallet.violations).to.deep.equal([]);
    });

    it('wallet_rejected:RS_ERROR_LIMIT_REACHED: REJECTED, no rollback, no money moved', async () => {
      const operator = await operatorWith({ bettingWindowMs: 1500 });
      const { player, playerRef, sessionId } = await seat(operator, { balance: 5_000_000n });
      await bettingOpen(player, 800);

      h.wallet.setFault('bet', { kind: 'status', status: 'RS_ERROR_LIMIT_REACHED', message: 'operator limit' }, 1);
      await rejected(player, { side: 'HIGH', amountMicro: 1_000_000, clientBetId: 'limited' }, 'wallet_rejected:RS_ERROR_LIMIT_REACHED');
      const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId, clientBetId: 'limited' } });
      expect(bet).to.include({ status: 'REJECTED', rejectReason: 'wallet_rejected:RS_ERROR_LIMIT_REACHED', rollbackTransactionUuid: null });
      expect(await h.svc.db.walletJob.count({ where: { betId: bet.id } })).to.equal(0);
      expect(await h.svc.db.round.findUnique({ where: { id: bet.roundId } })).to.equal(null);
      const betRequests = requestsOf(playerRef).filter((r) => r.endpoint === 'bet');
      expect(betRequests).to.have.length(1);
      expect(statusOf(betRequests[0])).to.equal('RS_ERROR_LIMIT_REACHED');
      expect(endpointsOf(playerRef).filter((e) => e === 'rollback')).to.deep.equal([]);
      expect(h.wallet.transactions.filter((t) => t.playerRef === playerRef)).to.deep.equal([]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(5_000_000n);
      const session = await h.svc.db.session.findUniqueOrThrow({ where: { id: sessionId } });
      expect(session.state).to.equal('ACTIVE');
      expect(h.wallet.violations).to.deep.equal([]);
    });

    it('wallet_timeout: REJECTED, and a rollback referencing the debit reaches the wallet (and refunds a debit that did happen)', async () => {
      const operator = await operatorWith({ bettingWindowMs: 4000 });
      const { player, playerRef, sessionId } = await seat(operator, { balance: 5_000_000n });
      await bettingOpen(player, 3000);

      // the wallet never answers: nothing was debited, the rollback finds nothing to reverse
      h.wallet.setFault('bet', { kind: 'hang' }, 1);
      await rejected(player, { side: 'LOW', amountMicro: '700000', clientBetId: 'hung' }, 'wallet_timeout');
      const hung = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId, clientBetId: 'hung' } });
      expect(hung).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
      expect(hung.rollbackTransactionUuid).to.be.a('string');
      const [hungCall] = await h.svc.db.walletCall.findMany({ where: { transactionUuid: hung.betTransactionUuid } });
      expect(hungCall).to.include({ endpoint: 'bet', status: 'RS_ERROR_TIMEOUT', httpStatus: null });
      const hungJob = await eventually(
        'the rollback of the hung debit to complete',
        () => h.svc.db.walletJob.findMany({ where: { betId: hung.id } }),
        (jobs) => jobs.length === 1 && jobs[0]!.completedAt !== null,
      );
      expect(hungJob[0]).to.include({ endpoint: 'rollback', purpose: 'uncertain_bet', transactionUuid: hung.rollbackTransactionUuid });
      expect(hungJob[0]!.payload).to.include({
        transactionUuid: hung.rollbackTransactionUuid,
        referenceTransactionUuid: hung.betTransactionUuid,
        playerRef,
      });
      const hungRollback = requestsOf(playerRef).filter((r) => r.endpoint === 'rollback');
      expect(hungRollback.map((r) => r.body)).to.have.length(1);
      expect(hungRollback[0]!.body).to.include({ transactionUuid: hung.rollbackTransactionUuid, referenceTransactionUuid: hung.betTransactionUuid });
      expect(statusOf(hungRollback[0])).to.equal('RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(5_000_000n);

      // the wallet debits but answers too late: the rollback gives the money back
      h.wallet.setFault('bet', { kind: 'delay', ms: 1500 }, 1);
      await rejected(player, { side: 'LOW', amountMicro: '400000', clientBetId: 'slow' }, 'wallet_timeout');
      const slow = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId, clientBetId: 'slow' } });
      expect(slow).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
      await eventually(
        'the rollback of the late debit to complete',
        () => h.svc.db.walletJob.findFirst({ where: { betId: slow.id } }),
        (job) => job?.completedAt != null,
      );
      const moves = h.wallet.transactions.filter((t) => t.playerRef === playerRef);
      expect(moves.map((t) => [t.type, t.amountMicro, t.transactionUuid, t.referenceTransactionUuid])).to.deep.equal([
        ['bet', 400_000n, slow.betTransactionUuid, undefined],
        ['rollback', 400_000n, slow.rollbackTransactionUuid, slow.betTransactionUuid],
      ]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(5_000_000n);
      expect(await h.svc.db.round.count({ where: { sessionId } })).to.equal(0);
      expect(h.wallet.violations).to.deep.equal([]);
    });
  });

  describe('what the client sends (D4, D18)', () => {
    it('malformed place_bet payloads are invalid_payload and never reach the wallet', async () => {
      const operator = await operatorWith({ bettingWindowMs: 1000, ...FORCE_HIGH });
      const { player, playerRef, sessionId, token } = await seat(operator, { balance: 5_000_000n });
      const invalid: unknown[] = [
        { side: 'LOW', amountMicro: 1.5, clientBetId: 'float' },
        { side: 'LOW', amountMicro: 2 ** 60, clientBetId: 'beyond-2^53' },
        { side: 'LOW', amountMicro: Number.MAX_SAFE_INTEGER + 2, clientBetId: 'just-beyond-2^53' },
        { side: 'LOW', amountMicro: 1e21, clientBetId: 'exponent' },
        { side: 'LOW', amountMicro: '100.00', clientBetId: 'decimal-string' },
        { side: 'LOW', amountMicro: '1e6', clientBetId: 'exponent-string' },
        { side: 'LOW', amountMicro: '1'.repeat(21), clientBetId: '21-digits' },
        { amountMicro: '100000', clientBetId: 'no-side' },
        { side: 'low', amountMicro: '100000', clientBetId: 'side-lowercase' },
        { side: 1, amountMicro: '100000', clientBetId: 'side-number' },
        { side: 'LOW', clientBetId: 'no-amount' },
        { side: 'LOW', amountMicro: true, clientBetId: 'amount-boolean' },
        { side: 'LOW', amountMicro: { micro: 100000 }, clientBetId: 'amount-object' },
        { side: 'LOW', amountMicro: '100000', clientBetId: 'extra-field', currency: 'USD' },
        { side: 'LOW', amountMicro: '100000', clientBetId: 42 },
        { side: 'LOW', amountMicro: '100000', clientBetId: '' },
        'LOW 100000',
        null,
        ['LOW', '100000'],
        42,
      ];
      // the per-socket throttle allows a burst of 10: a fresh connection for every 8 payloads
      let socket = player;
      for (const [i, payload] of invalid.entries()) {
        if (i > 0 && i % 8 === 0) {
          socket.close();
          socket = await connect(token);
          await socket.waitFor('connected');
        }
        await rejected(socket, payload, 'invalid_payload');
      }
      // no payload at all, only the ack callback
      const bare = await socket.socket.timeout(5_000).emitWithAck('place_bet');
      expect(bare).to.deep.equal({ ok: false, reason: 'invalid_payload' });
      // no ack callback: the bet_rejected message still tells
      const before = socket.messages.length;
      socket.socket.emit('place_bet', { side: 'HIGH', amountMicro: 2.5, clientBetId: 'no-ack' });
      expect(await socket.waitFor('bet_rejected', () => true, 5_000, before)).to.include({ reason: 'invalid_payload', clientBetId: 'no-ack' });

      expect(endpointsOf(playerRef).filter((e) => e !== 'balance')).to.deep.equal([]);
      expect(await h.svc.db.bet.count({ where: { sessionId } })).to.equal(0);

      // the same session and socket place a well-formed bet
      socket.close();
      socket = await connect(token);
      await socket.waitFor('connected');
      await bettingOpen(socket, 300);
      const ack = await accepted(socket, { side: 'LOW', amountMicro: 100000 });
      await settledRound(ack.roundId);
      expect(endpointsOf(playerRef).filter((e) => e === 'bet')).to.have.length(1);
      expect(h.wallet.violations).to.deep.equal([]);
    });

    it('a burst of 50 place_bet is throttled: mostly rate_limited, at most one bet', async () => {
      const operator = await operatorWith({ bettingWindowMs: 1500, ...FORCE_HIGH });
      const { player, playerRef, sessionId } = await seat(operator, { balance: 5_000_000n });
      const open = await bettingOpen(player, 1000);

      const acks = await Promise.all(
        Array.from({ length: 50 }, (_, i) => player.request('place_bet', { side: 'LOW', amountMicro: '100000', clientBetId: `flood-${i}` })),
      );
      const reasons = acks.filter((a) => a.ok !== true).map((a) => a.reason as string);
      const limited = reasons.filter((r) => r === 'rate_limited').length;
      expect(limited, inspect(acks)).to.be.at.least(35);
      // at most one bet: exactly one here, since the window is open and the stake affordable
      const ok = acks.filter((a) => a.ok === true);
      expect(ok, inspect(acks)).to.have.length(1);
      // what got past the throttle met rule 4
      expect(reasons.filter((r) => r !== 'rate_limited').every((r) => r === 'already_bet_this_round'), inspect(reasons)).to.equal(true);

      const live = await h.svc.db.bet.findMany({ where: { sessionId, cycleId: open.cycleId, status: { not: 'REJECTED' } } });
      expect(live).to.have.length(ok.length);
      expect(endpointsOf(playerRef).filter((e) => e === 'bet')).to.have.length(ok.length);
      for (const bet of ok) await settledRound(bet.roundId);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(5_000_000n - 100_000n * BigInt(ok.length));
      expect(h.wallet.violations).to.deep.equal([]);
    });
  });

  it('a disconnect right after the ack does not cancel the bet: it settles and the win is credited (8.6)', async () => {
    const operator = await operatorWith({ bettingWindowMs: 1200, ...FORCE_LOW });
    const { player, playerRef, sessionId, token } = await seat(operator, { balance: 5_000_000n });
    await bettingOpen(player, 700);
    const ack = await accepted(player, { side: 'LOW', amountMicro: '1000000' });
    player.close();
    const atClose = await h.svc.db.round.findUniqueOrThrow({ where: { id: ack.roundId } });
    expect(atClose.state).to.equal('BETTING_OPEN');

    const bet = await eventually(
      'the bet to be settled',
      () => h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } }),
      (b) => b.status === 'SETTLED',
    );
    expect(bet.payoutMicro).to.equal(1_940_000n);
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: ack.roundId } });
    expect(round).to.include({ state: 'SETTLED', settled: true, outcomeSide: 'LOW' });
    expect(h.wallet.transactions.filter((t) => t.playerRef === playerRef).map((t) => [t.type, t.amountMicro])).to.deep.equal([
      ['bet', 1_000_000n],
      ['win', 1_940_000n],
    ]);
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(5_940_000n);

    // the session stays reconnectable with the same token (3.3)
    const again = await connect(token);
    const connected = await again.waitFor('connected');
    expect(connected).to.include({ sessionId, balanceMicro: '5940000' });
    expect(h.wallet.violations).to.deep.equal([]);
  });

  it('demo mode (D8): a win and a loss against the service-kept balance, no wallet request at all', async () => {
    const operator = await operatorWith({ bettingWindowMs: 1500, maxBetMicro: 200_000_000n, ...FORCE_LOW });
    const walletRequests = h.wallet.requests.length;
    const { player, playerRef, sessionId, connected } = await seat(operator, { body: { mode: 'demo' } });
    expect(connected).to.include({ balanceMicro: '100000000', currency: 'EUR' });

    // cycle 1: a stake above the demo balance is refused as the wallet would; then a win
    const open = await bettingOpen(player, 900);
    await rejected(player, { side: 'LOW', amountMicro: '150000000', clientBetId: 'demo-too-much' }, 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY');
    const win = await accepted(player, { side: 'LOW', amountMicro: '1000000', clientBetId: 'demo-win' });
    expect(await player.waitFor('bet_placed', (p) => p.betId === win.betId)).to.include({ amountMicro: '1000000', side: 'LOW', isFree: false });
    const won = await player.waitFor('round_result', (p) => p.roundId === win.roundId);
    expect(won).to.include({ won: true, payoutMicro: '1940000', side: 'LOW', nonce: 0 });
    await player.waitFor('balance_update', (p) => p.balanceMicro === '100940000');

    // cycle 2: a loss
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && p.cycleId !== open.cycleId);
    const loss = await accepted(player, { side: 'HIGH', amountMicro: 500000, clientBetId: 'demo-loss' });
    const lost = await player.waitFor('round_result', (p) => p.roundId === loss.roundId);
    expect(lost).to.include({ won: false, payoutMicro: '0', side: 'LOW', nonce: 1 });
    await settledRound(loss.roundId);

    // 100000000 - 1000000 (stake), + 1940000 (net win), - 500000 (stake); nothing for the loss
    expect(player.messages.filter((m) => m.event === 'balance_update').map((m) => [m.payload.balanceMicro, m.payload.currency])).to.deep.equal([
      ['99000000', 'EUR'],
      ['100940000', 'EUR'],
      ['100440000', 'EUR'],
    ]);
    const session = await h.svc.db.session.findUniqueOrThrow({ where: { id: sessionId } });
    expect(session.demoBalanceMicro).to.equal(100_440_000n);
    const rounds = await h.svc.db.round.findMany({ where: { sessionId }, orderBy: { nonce: 'asc' } });
    expect(rounds.map((r) => [r.id, r.state, r.demo])).to.deep.equal([
      [win.roundId, 'SETTLED', true],
      [loss.roundId, 'SETTLED', true],
    ]);
    const bets = await h.svc.db.bet.findMany({ where: { sessionId } });
    expect(bets.map((b) => [b.clientBetId, b.status, b.demo]).sort()).to.deep.equal([
      ['demo-loss', 'SETTLED', true],
      ['demo-too-much', 'REJECTED', true],
      ['demo-win', 'SETTLED', true],
    ]);
    expect(await h.svc.db.walletJob.count({ where: { sessionId } })).to.equal(0);
    expect(await h.svc.db.walletCall.count({ where: { sessionId } })).to.equal(0);
    expect(h.wallet.requests).to.have.length(walletRequests);
    expect(requestsOf(playerRef)).to.deep.equal([]);
    expect(h.wallet.violations).to.deep.equal([]);
  });
});
