import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, tick, until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { freePort, spawnService, type ServiceProcess } from '../../support/processes.js';
import { runRgs } from '../../support/rgs-cli.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// D35 and D42, docs/sandbox.md "Free bets in the sandbox": a sandbox operator whose wallet is
// the wallet sandbox (`npm run sandbox`, a process of its own) grants free rounds with `rgs
// freebets create`; its player, launched with sandboxSeeds, plays one; the sandbox books the
// debit isFree with the campaign's bonusRef and no cash, then credits the net win; the round
// reads free and sandbox.
describe('free bets in the sandbox (D35, D42)', function () {
  this.timeout(90_000);
  const token = randomBytes(16).toString('hex');
  const FUNDS = 5_000_000n;
  // 1.00 (100000 micro-units) at x2.5 without commission: paid 2.50, so a free bet nets 1.50
  const STAKE = 100_000n;
  const NET = 150_000n;
  let sandbox: ServiceProcess;
  let sandboxUrl: string;
  let h: Harness;
  let operator: TestOperator;
  let dir: string;

  const admin = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${sandboxUrl}/admin${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(response.status, route).to.equal(200);
    return (await response.json()) as any;
  };

  before(async () => {
    const port = await freePort();
    sandbox = spawnService('sandbox', { SANDBOX_PORT: String(port), SANDBOX_ADMIN_TOKEN: token }, 'src/sandbox.ts');
    sandboxUrl = (await sandbox.waitForText(/wallet URL:/)).split('wallet URL:')[1]!.trim();
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
    // the sandbox operator of docs/sandbox.md: its wallet is the sandbox, which is handed its credential
    operator = await h.onboard({ sandbox: true, walletUrl: sandboxUrl });
    await admin('POST', '/credentials', { kid: operator.walletKeyId, secret: operator.walletSignatureSecret });
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {
      bettingWindowMs: 60_000,
      rollingWindowMs: 300,
      cooldownMs: 200,
      lowWeight: 1n,
      highWeight: 0n,
      payoutMultiplierScaled: 250_000n,
      commissionMicro: 0n,
    });
    dir = await mkdtemp(path.join(tmpdir(), 'rgs-sandbox-freebets-'));
  });
  after(async () => {
    await h?.close();
    await sandbox?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('rgs freebets create grants a sandbox operator\'s player free rounds, which the sandbox books without cash and pays net', async () => {
    const playerRef = uniqueId('player');
    const campaignRef = uniqueId('sandbox-camp').replace(/[^A-Za-z0-9._:-]/g, '-');
    const players = path.join(dir, 'players.csv');
    await writeFile(players, `${playerRef}\n`);
    const expiresAt = new Date(Date.now() + 24 * 3600_000).toISOString();
    const created = await runRgs(
      ['freebets', 'create', '--operator', operator.operatorId, '--campaign-ref', campaignRef, '--game', 'dice', '--currency', 'EUR',
        '--stake', STAKE.toString(), '--rounds', '2', '--expires-at', expiresAt, '--players-file', players],
      { env: { DATABASE_URL: TEST_DATABASE_URL }, unset: ['NODE_ENV'], timeoutMs: 30_000 },
    );
    expect(created.code, `${created.stderr}${created.stdout}`).to.equal(0);
    expect(JSON.parse(created.stdout)).to.include({ grants: 1 });

    await admin('POST', '/balances', { playerRef, currency: 'EUR', balanceMicro: FUNDS.toString() });
    const launch = await operator.launch({ playerRef, sandboxSeeds: { serverSeed: 'a1'.repeat(32), clientSeed: 'sandbox-free' } });
    expect(launch.status, launch.text).to.equal(200);
    expect(launch.body.sandbox).to.equal(true);
    const player = await Player.connect(h.baseUrl, launch.body.sessionToken as string);
    const connected = await player.waitFor('connected');
    expect(connected.freeBets).to.have.length(1);
    const grant = connected.freeBets[0];
    expect(grant).to.include({ campaignRef, stakeMicro: STAKE.toString(), remaining: 2 });

    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    const ack = await player.request('place_bet', { side: 'LOW', freeBetGrantId: grant.grantId });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await tick(h, { cycleId: pending.id, from: 'BETTING_OPEN' });
    await tick(h, { cycleId: pending.id, from: 'ROLLING' });
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    player.close();

    // the sandbox's ledger: the debit booked as a free bet of the campaign, no cash moved; the net credited
    const { entries } = await admin('GET', '/ledger');
    expect(entries.map((e: Record<string, unknown>) => [e.type, e.amountMicro, e.balanceAfterMicro, e.isFree ?? false, e.bonusRef ?? null])).to.deep.equal([
      ['bet', STAKE.toString(), FUNDS.toString(), true, campaignRef],
      ['win', NET.toString(), (FUNDS + NET).toString(), false, null],
    ]);
    expect((await admin('GET', '/balances')).balances).to.deep.include({ playerRef, currency: 'EUR', balanceMicro: (FUNDS + NET).toString() });
    expect((await admin('GET', '/violations')).violations).to.deep.equal([]);

    // the round reads free and sandbox
    const round = await operator.request('GET', `/v1/rounds/${ack.roundId}`);
    expect(round.body).to.include({ sandbox: true, isFree: true, bonusRef: campaignRef, totalBetsMicro: '0', totalPayoutsMicro: NET.toString() });
  });
});
