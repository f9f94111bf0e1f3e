import { expect } from 'chai';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDb, type Db } from '../../../src/shared/platform/db/client.js';
import { loadConfig } from '../../../src/shared/platform/config.js';
import { createOperator } from '../../../src/shared/game/operators/operators.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { uniqueId } from '../../support/harness.js';
import { refused, runRgs, succeeded } from '../../support/rgs-cli.js';

// `rgs freebets create/list/cancel` (D42), as the administrator's subprocess runs it: the same
// rules as POST, GET and DELETE /v1/freebets.

const rgs = (...args: string[]) => runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL }, unset: ['NODE_ENV'], timeoutMs: 30_000 });

describe('rgs freebets (D42)', function () {
  this.timeout(120_000);
  let db: Db;
  let operatorId: string;
  let dir: string;
  let players: string;

  before(async () => {
    db = createDb(TEST_DATABASE_URL, 2);
    operatorId = (await createOperator(db, loadConfig().masterKey, uniqueId('fb'), { walletUrl: 'http://127.0.0.1:9/wallet' })).operatorId;
    dir = await mkdtemp(path.join(tmpdir(), 'rgs-freebets-'));
    players = path.join(dir, 'players.csv');
    await writeFile(players, 'p-1\r\np-2\n\np-3\n');
  });
  after(async () => {
    await db?.$disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  const expiresAt = () => new Date(Date.now() + 7 * 86_400_000).toISOString();

  it('creates a campaign from a players file, lists its grants, cancels it twice with the same totals', async () => {
    const expires = expiresAt();
    const create = ['freebets', 'create', '--operator', operatorId, '--campaign-ref', 'cli-1', '--game', 'dice', '--currency', 'EUR', '--stake', '100000', '--rounds', '5', '--expires-at', expires, '--players-file', players];
    const created = succeeded(await rgs(...create));
    expect(created.grants).to.equal(3);
    // the same terms again: the same campaign
    expect(succeeded(await rgs(...create))).to.deep.equal(created);
    const conflict = refused(await rgs(...create.map((arg) => (arg === '5' ? '6' : arg))));
    expect(conflict.error).to.equal('campaign_conflict');

    const listed = succeeded(await rgs('freebets', 'list', '--operator', operatorId, '--campaign-ref', 'cli-1'));
    expect(listed.grants.map((grant: { playerRef: string }) => grant.playerRef).sort()).to.deep.equal(['p-1', 'p-2', 'p-3']);
    const mine = succeeded(await rgs('freebets', 'list', '--operator', operatorId, '--player', 'p-2'));
    expect(mine.grants).to.have.length(1);
    expect(mine.grants[0]).to.deep.include({ campaignId: created.campaignId, rounds: 5, remaining: 5, status: 'active' });

    const cancelled = succeeded(await rgs('freebets', 'cancel', '--operator', operatorId, '--campaign', created.campaignId));
    expect(cancelled).to.deep.include({ campaignId: created.campaignId, state: 'cancelled', granted: 15, played: 0, cancelled: 15, remaining: 0 });
    expect(succeeded(await rgs('freebets', 'cancel', '--operator', operatorId, '--campaign', created.campaignId))).to.deep.equal(cancelled);
  });

  it('refuses with the API\'s codes: a stake off the step, an unknown game, an unknown campaign or operator', async () => {
    const base = ['freebets', 'create', '--operator', operatorId, '--game', 'dice', '--currency', 'EUR', '--rounds', '1', '--expires-at', expiresAt(), '--players-file', players];
    expect(refused(await rgs(...base, '--campaign-ref', 'cli-2', '--stake', '100001')).error).to.equal('bet_out_of_range');
    expect(refused(await rgs(...base.map((arg) => (arg === 'dice' ? 'crash' : arg)), '--campaign-ref', 'cli-2', '--stake', '100000')).error).to.equal('game_not_available');
    expect(refused(await rgs(...base, '--campaign-ref', 'bad ref', '--stake', '100000')).error).to.equal('invalid_request');
    const unknown = refused(await rgs('freebets', 'cancel', '--operator', operatorId, '--campaign', '00000000-0000-0000-0000-000000000000'));
    expect(unknown.error).to.equal('campaign_not_found');
    expect(refused(await rgs('freebets', 'list', '--operator', 'nobody-such')).message).to.match(/does not exist/);
    const missing = await rgs(...base, '--campaign-ref', 'cli-3', '--stake', '100000', '--players-file', path.join(dir, 'none.csv'));
    expect(missing.code).to.equal(2);
  });
});
