import { expect } from 'chai';
import { createDb, type Db } from '../../../src/shared/platform/db/client.js';
import { loadConfig } from '../../../src/shared/platform/config.js';
import { createOperator } from '../../../src/shared/game/operators/operators.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { uniqueId } from '../../support/harness.js';
import { refused, runRgs, succeeded } from '../../support/rgs-cli.js';

// `rgs jurisdiction set|show` (D44), as the administrator's subprocess runs it: stricter values
// are stored and printed with the rules in force; a looser one fails naming the bound, and
// nothing of its command is stored.

const rgs = (...args: string[]) => runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL }, unset: ['NODE_ENV'], timeoutMs: 30_000 });

describe('rgs jurisdiction (D44)', function () {
  this.timeout(120_000);
  let db: Db;
  let operatorId: string;

  before(async () => {
    db = createDb(TEST_DATABASE_URL, 2);
    operatorId = (await createOperator(db, loadConfig().masterKey, uniqueId('jur'), { walletUrl: 'http://127.0.0.1:9/wallet' })).operatorId;
  });
  after(async () => {
    await db?.$disconnect();
  });

  it('makes a profile stricter, refuses a looser value naming the bound, and shows the rules in force', async () => {
    const set = succeeded(await rgs('jurisdiction', 'set', '--operator', operatorId, '--code', 'de', '--set', 'maxStakeMicro.EUR=50000', '--set', 'minRoundMs=10000'));
    expect(set).to.deep.equal({
      code: 'DE',
      profile: 'DE',
      rules: { minRoundMs: 10000, autoplay: false, realityCheckMinutes: null, showElapsedTime: false, showNetPosition: false, maxStakeMicro: { EUR: '50000' } },
      overrides: { maxStakeMicro: { EUR: '50000' }, minRoundMs: 10000 },
    });

    // one looser value refuses the whole command: its stricter value is not stored either
    const looser = refused(await rgs('jurisdiction', 'set', '--operator', operatorId, '--code', 'DE', '--set', 'realityCheckMinutes=20', '--set', 'maxStakeMicro.EUR=60000'));
    expect(looser).to.deep.equal({ error: 'JurisdictionOverrideError', message: 'maxStakeMicro.EUR may only be stricter than in force: at most 50000' });
    expect(refused(await rgs('jurisdiction', 'set', '--operator', operatorId, '--code', 'GB', '--set', 'autoplay=true')).message).to.equal(
      'autoplay may only be stricter than in force: false',
    );
    expect(refused(await rgs('jurisdiction', 'set', '--operator', 'nobody-such', '--code', 'GB', '--set', 'minRoundMs=9000')).message).to.match(/does not exist/);

    expect(succeeded(await rgs('jurisdiction', 'show', '--operator', operatorId, '--code', 'DE'))).to.deep.equal(set);
    const all = succeeded(await rgs('jurisdiction', 'show', '--operator', operatorId));
    expect(all.map((entry: { code: string; profile: string }) => [entry.code, entry.profile])).to.deep.equal([
      ['GB', 'GB'],
      ['DE', 'DE'],
      ['CA-ON', 'CA-ON'],
      ['default', 'default'],
    ]);
    expect(all[0].rules).to.deep.equal({ minRoundMs: 5000, autoplay: false, realityCheckMinutes: 60, showElapsedTime: true, showNetPosition: true, maxStakeMicro: {} });
    // a command line it does not understand
    expect((await rgs('jurisdiction', 'set', '--operator', operatorId, '--code', 'GB')).code).to.equal(2);
  });
});
