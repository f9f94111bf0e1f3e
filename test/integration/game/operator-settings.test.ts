import { expect } from 'chai';
import { loadConfig } from '../../../src/shared/platform/config.js';
import { createDb, type Db } from '../../../src/shared/platform/db/client.js';
import { createOperator, OperatorInputError, updateOperator, type OperatorSettings } from '../../../src/shared/game/operators/operators.js';
import { NonPublicAddressError, publicOnlyLookup } from '../../../src/shared/platform/address-policy.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { uniqueId } from '../../support/harness.js';

// D25: operator settings are validated. In production a wallet URL is https:, carries no
// credentials and does not resolve to loopback, link-local or private ranges unless the
// operator is flagged walletUrlPrivateAllowed; frame-ancestors entries are origins in every
// environment. A refused setting changes nothing in the database.

const PRODUCTION = { production: true };
const { masterKey } = loadConfig();

describe('operator settings (D25)', () => {
  let db: Db;

  before(() => {
    db = createDb(TEST_DATABASE_URL, 2);
  });
  after(() => db.$disconnect());

  async function refusedCreate(settings: OperatorSettings & { walletUrl: string }, options = {}): Promise<string> {
    const id = uniqueId('settings');
    try {
      await createOperator(db, masterKey, id, settings, options);
    } catch (err) {
      expect(err, (err as Error).stack).to.be.instanceOf(OperatorInputError);
      expect(await db.operator.count({ where: { id } }), 'nothing stored').to.equal(0);
      return (err as Error).message;
    }
    expect.fail(`created with ${JSON.stringify(settings)}`);
  }

  const created = async (settings: OperatorSettings & { walletUrl: string }, options = {}) => {
    const id = uniqueId('settings');
    await createOperator(db, masterKey, id, settings, options);
    return db.operator.findUniqueOrThrow({ where: { id } });
  };

  describe('wallet URL in production', () => {
    it('must be https:', async () => {
      expect(await refusedCreate({ walletUrl: 'http://8.8.8.8/wallet' }, PRODUCTION)).to.include('https');
    });

    it('carries no credentials, in any environment', async () => {
      for (const options of [PRODUCTION, {}]) {
        expect(await refusedCreate({ walletUrl: 'https://user:pass@8.8.8.8/wallet' }, options)).to.include('credentials');
        expect(await refusedCreate({ walletUrl: 'https://user@8.8.8.8/wallet' }, options)).to.include('credentials');
      }
    });

    for (const [url, range] of [
      ['https://127.0.0.1:8443/wallet', 'loopback'],
      ['https://127.1.2.3', 'loopback'],
      ['https://[::1]/wallet', 'loopback'],
      ['https://[::ffff:127.0.0.1]/wallet', 'loopback'],
      ['https://0x7f000001/wallet', 'loopback'],
      ['https://localhost/wallet', 'loopback'],
      ['https://169.254.169.254/latest', 'linkLocal'],
      ['https://[fe80::1]/wallet', 'linkLocal'],
      ['https://10.1.2.3/wallet', 'private'],
      ['https://172.16.0.9/wallet', 'private'],
      ['https://192.168.1.20/wallet', 'private'],
      ['https://[fd00::5]/wallet', 'uniqueLocal'],
      ['https://100.64.0.1/wallet', 'carrierGradeNat'],
      ['https://0.0.0.0/wallet', 'unspecified'],
      ['https://[64:ff9b::7f00:1]/wallet', 'rfc6052'],
    ] as const) {
      it(`does not resolve to a non-public address: ${url} (${range})`, async () => {
        const message = await refusedCreate({ walletUrl: url }, PRODUCTION);
        expect(message).to.include(range).and.to.include('--wallet-url-private-allowed');
      });
    }

    it('refuses a host name that does not resolve', async () => {
      expect(await refusedCreate({ walletUrl: 'https://no-such-wallet.invalid/wallet' }, PRODUCTION)).to.include('resolve');
    });

    it('takes a public https URL', async () => {
      const operator = await created({ walletUrl: 'https://8.8.8.8/wallet/' }, PRODUCTION);
      expect(operator.walletUrl).to.equal('https://8.8.8.8/wallet');
      expect(operator.walletUrlPrivateAllowed).to.equal(false);
      const v6 = await created({ walletUrl: 'https://[2606:4700:4700::1111]/wallet' }, PRODUCTION);
      expect(v6.walletUrl).to.equal('https://[2606:4700:4700::1111]/wallet');
    });

    it('takes a private address when the operator is flagged walletUrlPrivateAllowed (still https)', async () => {
      const operator = await created({ walletUrl: 'https://10.1.2.3/wallet', walletUrlPrivateAllowed: true }, PRODUCTION);
      expect(operator.walletUrlPrivateAllowed).to.equal(true);
      expect(await refusedCreate({ walletUrl: 'http://10.1.2.3/wallet', walletUrlPrivateAllowed: true }, PRODUCTION)).to.include('https');
    });

    it('update checks the URL and the flag together, against what is stored', async () => {
      const publicOne = await created({ walletUrl: 'https://8.8.8.8/wallet' }, PRODUCTION);
      const refusedUpdate = async (id: string, settings: OperatorSettings) => {
        const before = await db.operator.findUniqueOrThrow({ where: { id } });
        const error = await updateOperator(db, id, settings, PRODUCTION).then(
          () => expect.fail(`updated with ${JSON.stringify(settings)}`),
          (err: unknown) => err as Error,
        );
        expect(error).to.be.instanceOf(OperatorInputError);
        const after = await db.operator.findUniqueOrThrow({ where: { id } });
        expect(after.walletUrl).to.equal(before.walletUrl);
        expect(after.walletUrlPrivateAllowed).to.equal(before.walletUrlPrivateAllowed);
        return error.message;
      };
      expect(await refusedUpdate(publicOne.id, { walletUrl: 'https://192.168.1.20/wallet' })).to.include('private');
      const flagged = await updateOperator(db, publicOne.id, { walletUrl: 'https://192.168.1.20/wallet', walletUrlPrivateAllowed: true }, PRODUCTION);
      expect(flagged).to.include({ walletUrl: 'https://192.168.1.20/wallet', walletUrlPrivateAllowed: true });
      // taking the flag away while the stored URL is private is refused
      expect(await refusedUpdate(publicOne.id, { walletUrlPrivateAllowed: false })).to.include('private');
      // with a public URL at the same time it is fine
      const back = await updateOperator(db, publicOne.id, { walletUrl: 'https://8.8.4.4/wallet', walletUrlPrivateAllowed: false }, PRODUCTION);
      expect(back).to.include({ walletUrl: 'https://8.8.4.4/wallet', walletUrlPrivateAllowed: false });
    });
  });

  describe('wallet URL outside production', () => {
    it('takes http: and private addresses (tests and the demo use 127.0.0.1)', async () => {
      expect((await created({ walletUrl: 'http://127.0.0.1:3001' })).walletUrl).to.equal('http://127.0.0.1:3001');
      expect((await created({ walletUrl: 'http://localhost:3001/w' })).walletUrl).to.equal('http://localhost:3001/w');
    });
  });

  // the same rule at connect time (the wallet client's connections in production), in both
  // shapes a connection may ask for: every address, or the first
  describe('the wallet connection lookup', () => {
    const lookedUp = (host: string, all: boolean) =>
      new Promise<{ err: Error | null; address: unknown; family?: number }>((resolve) =>
        publicOnlyLookup(host, { all }, (err, address, family) => resolve({ err, address, family })),
      );

    for (const all of [true, false]) {
      it(`refuses a name or address that is not public (all: ${all})`, async () => {
        for (const host of ['localhost', '127.0.0.1', '10.1.2.3', '169.254.169.254', '::1']) {
          const { err } = await lookedUp(host, all);
          expect(err, host).to.be.instanceOf(NonPublicAddressError);
          expect(err!.message, host).to.include('not a public address');
        }
      });
    }

    it('hands a public address out as it was asked for', async () => {
      expect(await lookedUp('93.184.216.34', false)).to.deep.include({ err: null, address: '93.184.216.34', family: 4 });
      expect((await lookedUp('93.184.216.34', true)).address).to.deep.equal([{ address: '93.184.216.34', family: 4 }]);
    });
  });

  describe('frame ancestors, in every environment', () => {
    const refused = [
      '*',
      'https:',
      'https://',
      'http:',
      'https://*',
      'https://*:443',
      'https://a.*.example',
      'https://*example.com',
      'https://casino.*',
      'https://**.casino.example',
      'https://*.com',
      'casino.example',
      '//casino.example',
      'https://casino.example/path',
      'https://casino.example/',
      'https://casino.example:0',
      'https://casino.example:65536',
      'https://casino.example:*',
      'ftp://casino.example',
      "'self'",
      'https://casino.example;script-src *',
      'https://user@casino.example',
      'https://-casino.example',
    ];
    for (const entry of refused) {
      it(`refuses ${JSON.stringify(entry)}`, async () => {
        for (const options of [{}, PRODUCTION]) {
          const message = await refusedCreate({ walletUrl: 'https://8.8.8.8/wallet', frameAncestors: [entry] }, options);
          expect(message).to.include('frame ancestor');
        }
      });
    }

    it('takes origins, with a *. wildcard as the left-most label', async () => {
      const entries = ['https://casino.example', 'https://*.casino.example', 'https://casino.example:8443', 'http://localhost:3000', 'https://203.0.113.7'];
      const operator = await created({ walletUrl: 'https://8.8.8.8/wallet', frameAncestors: entries }, PRODUCTION);
      expect(operator.frameAncestors).to.deep.equal(entries);
    });

    it('update refuses a bare * too', async () => {
      const operator = await created({ walletUrl: 'http://127.0.0.1:3001' });
      const error = await updateOperator(db, operator.id, { frameAncestors: ['*'] }).catch((err: unknown) => err as Error);
      expect(error).to.be.instanceOf(OperatorInputError);
      expect((await db.operator.findUniqueOrThrow({ where: { id: operator.id } })).frameAncestors).to.deep.equal([]);
    });
  });
});
