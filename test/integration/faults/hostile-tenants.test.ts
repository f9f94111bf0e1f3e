import { expect } from 'chai';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer, until, type SeatedPlayer } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { addPublicKeyCredential } from '../../../src/shared/wallet/credentials.js';
import { hugeExponentKey } from '../../support/hostile-keys.js';
import { signedRequest, type ApiResponse } from '../../support/signed-client.js';

// D24: one tenant's or one player's hostile input can fail only its own requests. Three
// operators share one deployment: A's wallet answers huge, endless, slow and lying bodies;
// a player of B sends malformed and oversized messages and opens many sockets with one
// token; C's players bet honestly. Every honest bet must be accepted and acknowledged. The
// honest players' ack p99 is printed with and without the attackers, for the reader; the
// benchmark is where timing is judged. A fourth operator publishes a hostile key set (RSA
// keys of a huge exponent, each verification as dear as a signature) and floods the API
// with forged signatures naming its kid, before any per-operator limit applies; C's REST
// calls must all be served.

const HONEST_PLAYERS = 8;
const ROUNDS = 3;
const STAKE = '1000000';

// Answers balance calls plainly (so that its players launch and bet) and every money call
// with something no honest wallet sends, in turn.
class HostileWallet {
  // money calls answered with hostility
  served = 0;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<HostileWallet> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const wallet = new HostileWallet(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => wallet.answer(req, res));
    return wallet;
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url?.endsWith('/wallet/balance')) {
        const { requestUuid } = JSON.parse(Buffer.concat(chunks).toString()) as { requestUuid: string };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'RS_OK', requestUuid, balanceMicro: '1000000000', currency: 'EUR' }));
        return;
      }
      const kind = this.served++ % 4;
      res.on('error', () => undefined);
      if (kind === 0) {
        // a body far over any cap, claimed up front
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024) });
        res.write(`{"status":"RS_OK","padding":"${'x'.repeat(1024 * 1024)}`);
      } else if (kind === 1) {
        // an endless chunked body
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = 'y'.repeat(256 * 1024);
        res.write('{"status":"RS_OK","padding":"');
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      } else if (kind === 2) {
        // a byte at a time, never finishing within any timeout
        res.writeHead(200, { 'content-type': 'application/json' });
        const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 100);
        res.on('close', () => clearInterval(drip));
      } else {
        // a lie: a long status, no requestUuid, a float balance
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: `RS_OK${'!'.repeat(10_000)}`, balanceMicro: 1.5, message: 'z'.repeat(10_000) }));
      }
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const p99 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? NaN;
};

describe('hostile tenants (D24)', function () {
  this.timeout(120_000);
  let h: Harness;
  let hostileWallet: HostileWallet;
  let honest: TestOperator;
  let honestSeats: SeatedPlayer[];

  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
    hostileWallet = await HostileWallet.start();
    honest = await operatorWith(h);
    honestSeats = [];
    for (let i = 0; i < HONEST_PLAYERS; i++) honestSeats.push(await seatPlayer(h, honest, 1_000_000_000n));
  });

  after(async () => {
    for (const seat of honestSeats ?? []) seat.player.close();
    await h?.close();
    await hostileWallet?.close();
  });

  // every honest player bets once in each of `rounds` betting windows; all acks are kept
  // alongside: fired in the same instant as the honest bets of each round
  async function honestRounds(rounds: number, alongside: () => void = () => undefined) {
    const acks: { ok: boolean; reason?: string; ms: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      await bettingWindowWithRoom(honestSeats[0]!.player, 600);
      alongside();
      const placed = await Promise.all(
        honestSeats.map(async (seat) => {
          const started = performance.now();
          const ack = await seat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE });
          return { ...ack, ms: performance.now() - started };
        }),
      );
      acks.push(...placed);
      // the next window, so that every round is a fresh one
      await honestSeats[0]!.player.next('round_state', (s) => s.phase !== 'BETTING_OPEN', 15_000);
    }
    return acks;
  }

  it('honest players of a third operator have every bet accepted while a wallet and a player attack', async () => {
    const quiet = await honestRounds(ROUNDS);
    expect(quiet.filter((a) => !a.ok), 'refused without attackers').to.deep.equal([]);

    // operator A: its wallet attacks; its own players bet into it
    const hostileOperator = await operatorWith(h, {}, { walletUrl: hostileWallet.url });
    // operator B: hostile players with real sessions
    const playerOperator = await operatorWith(h);
    const hostileSeats = await Promise.all([0, 1, 2, 3].map(() => seatPlayer(h, playerOperator, 1_000_000_000n)));
    const hostileSeat = hostileSeats[0]!;
    const hostileBets = [
      { side: 'LOW', amountMicro: '99999999999999999999' },
      { side: 'HIGH', amountMicro: '9223372036854775808' },
      { side: 'LOW', amountMicro: -1 },
      { side: 'LOW', amountMicro: 'di\u0000ce' },
      { side: 'LOW', amountMicro: '1', extra: 'x'.repeat(16 * 1024) },
    ];
    // malformed bets that reach the service in the same moment as the honest ones
    const volley = () => {
      for (const seat of hostileSeats) {
        for (const bet of hostileBets.slice(0, 2)) seat.player.socket.emit('place_bet', bet, () => undefined);
      }
    };

    let attacking = true;
    const attacks: Promise<unknown>[] = [];
    // A's players launch and bet into their wallet, round after round
    const walletPlayers = await Promise.all([0, 1, 2, 3].map(() => seatPlayer(h, hostileOperator, 0n)));
    attacks.push(
      ...walletPlayers.map(async (seat) => {
        while (attacking) {
          await seat.player.request('place_bet', { side: 'HIGH', amountMicro: STAKE }, 15_000).catch(() => undefined);
          await seat.player.next('round_state', (s) => s.phase === 'BETTING_OPEN', 15_000).catch(() => undefined);
        }
        seat.player.close();
      }),
    );
    // B's player: malformed bets in the same event-loop turns as the honest ones,
    // oversized messages, and a crowd of sockets on one token
    const crowd: Player[] = [];
    attacks.push(
      (async () => {
        let i = 0;
        while (attacking) {
          await hostileSeat.player.request('place_bet', hostileBets[i++ % hostileBets.length], 2000).catch(() => undefined);
          if (hostileSeat.player.socket.disconnected) break;
        }
      })(),
    );
    attacks.push(
      (async () => {
        for (let i = 0; i < 20 && attacking; i++) {
          const socket = await Player.connect(h.baseUrl, hostileSeat.token).catch(() => undefined);
          if (socket) crowd.push(socket);
        }
      })(),
    );

    let loud: Awaited<ReturnType<typeof honestRounds>>;
    try {
      loud = await honestRounds(ROUNDS, volley);
      attacking = false;
      await Promise.all(attacks);
      // one token's crowd was cut down to the three newest sockets, the rest replaced (the
      // session's first socket was closed for its oversized message already)
      const live = () => [hostileSeat.player, ...crowd].filter((p) => p.socket.connected).length;
      await until('one session down to 3 live sockets', async () => live() <= 3);
      expect(crowd.filter((p) => p.messages.some((m) => m.event === 'session_ended' && m.payload.reason === 'replaced')))
        .to.have.length.of.at.least(crowd.length - 3);
    } finally {
      attacking = false;
      await Promise.all(attacks);
      for (const socket of crowd) socket.close();
      for (const seat of hostileSeats) seat.player.close();
    }
    console.log(
      `      honest ack p99: ${p99(quiet.map((a) => a.ms)).toFixed(1)} ms without attackers, ` +
        `${p99(loud.map((a) => a.ms)).toFixed(1)} ms with them (${HONEST_PLAYERS} players, ${ROUNDS} rounds each)`,
    );
    // the attacks did reach the service
    expect(hostileWallet.served, 'money calls to the hostile wallet').to.be.greaterThan(0);
    expect(loud.filter((a) => !a.ok), 'honest bets refused while attacked').to.deep.equal([]);
    expect(loud).to.have.length(HONEST_PLAYERS * ROUNDS);
    // every honest stake moved exactly once at the honest operator's wallet
    const debits = h.wallet.requests.filter((r) => r.endpoint === 'bet' && honestSeats.some((s) => (r.body as { playerRef?: string })?.playerRef === s.playerRef));
    expect(debits.length).to.be.at.least(HONEST_PLAYERS * ROUNDS * 2);
  });
});

describe('hostile tenants: a hostile key set (D24, D34, D37)', function () {
  this.timeout(120_000);
  it('an operator whose key set holds RSA keys of a huge exponent, flooding forged signatures, refuses none of another operator\'s calls', async () => {
    // D37: a process kept late by verifications refuses every operator's calls with
    // service_busy; the tests' bound is loose (test/support/env.ts), so what proves the fix
    // is that the flood is cut off before verifying, and the p99 printed shows what it cost
    const api = await startHarness({}, ['api']);
    try {
      await keySetFlood(api);
    } finally {
      await api.close();
    }
  });
});

async function keySetFlood(h: Harness): Promise<void> {
  const HONEST_CALLS = 40;
  // D34, D24: RSA keys of e = n - 2 (3072 bits), nine of them, and one honest RSA key last;
  // made first: making them blocks this process, which the service shares
  const hostileKeys = [hugeExponentKey(3072), hugeExponentKey(3072), hugeExponentKey(3072)];
  const set = {
    keys: [
      ...[...hostileKeys, ...hostileKeys, ...hostileKeys].map((key, i) => ({ ...key.export({ format: 'jwk' }), kid: `hostile-${i}`, use: 'sig', alg: 'RS256' })),
      { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }), kid: 'plain', use: 'sig', alg: 'RS256' },
    ],
  };
  const honest = await h.onboard();
  // the honest operator's reads, one after another, a little under its read bucket's rate
  const honestCalls = async () => {
    const calls: { status: number; ms: number }[] = [];
    for (let i = 0; i < HONEST_CALLS; i++) {
      const started = performance.now();
      const response = await honest.request('GET', '/v1/rounds');
      calls.push({ status: response.status, ms: performance.now() - started });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return calls;
  };
  // the process's first calls (code loaded, statements prepared) are no measure of anything
  for (let i = 0; i < 5; i++) await honest.request('GET', '/v1/rounds');
  const quiet = await honestCalls();
  expect(quiet.filter((c) => c.status !== 200), 'refused without the attacker').to.deep.equal([]);

  const keyServer = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(set));
  });
  await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
  const keyOperator = await h.onboard();
  const jwksUrl = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/jwks.json`;
  const { kid } = await addPublicKeyCredential(h.svc.db, keyOperator.operatorId, 'RS256', { jwksUrl }, { production: false, now: h.svc.now() });

  // forged signatures of the modulus's length naming that kid, 20 a second, not awaited
  const forged: Promise<ApiResponse>[] = [];
  const flood = setInterval(() => {
    forged.push(
      signedRequest(h.baseUrl, { kid, secret: 'unknown' }, 'GET', '/v1/rounds', undefined, { signature: randomBytes(384).toString('base64') }),
    );
  }, 50);
  let loud: Awaited<ReturnType<typeof honestCalls>>;
  try {
    loud = await honestCalls();
  } finally {
    clearInterval(flood);
    keyServer.closeAllConnections();
    keyServer.close();
  }
  const answers = await Promise.all(forged);
  const p99Of = (calls: { ms: number }[]) => p99(calls.map((c) => c.ms)).toFixed(1);
  console.log(
    `      honest REST p99: ${p99Of(quiet)} ms without the hostile key set, ${p99Of(loud)} ms with it ` +
      `(${HONEST_CALLS} calls each; ${answers.length} forged calls answered ${[...new Set(answers.map((a) => a.status))].sort().join(', ')})`,
  );
  // the forged calls reached the service and were refused, none served: the first ten
  // verified and failed, then the kid's failures were refused before any verification
  // (D24: burst 10, 1 a second, far under the flood's 20)
  expect(answers.length).to.be.greaterThan(20);
  expect(answers.filter((a) => !['invalid_signature', 'rate_limited'].includes(a.body?.error))).to.deep.equal([]);
  expect(answers.filter((a) => a.status === 401).length, 'forged calls verified').to.be.at.least(10).and.lessThan(answers.length / 2);
  expect(loud.filter((c) => c.status !== 200), 'honest calls refused while the hostile key set was used').to.deep.equal([]);
  }
