import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { canonicalString, createOperatorClient, sign } from '../../clients/typescript/index.js';
import { canonicalString as serviceCanonical, sign as serviceSign } from '../../src/shared/wallet/signer.js';

// The operator client (clients/typescript, docs/clients.md): its types are what
// openapi-typescript makes of the committed OpenAPI document, and its signer, written apart
// from the service's so that the package stands alone, produces exactly the service's
// signature (contract 5.1).

const root = new URL('../../', import.meta.url);
const SECRET = 'a3f1'.repeat(32); // the shape of an issued secret: 128 hex characters (D6)

describe('the operator client (clients/typescript)', () => {
  it('schema.d.ts is what openapi-typescript generates from docs/openapi.json (run `npm run docs`)', async () => {
    const document = JSON.parse(readFileSync(new URL('docs/openapi.json', root), 'utf8'));
    // what the CLI of `npm run client` writes: its header, then the printed types
    const generated = `${COMMENT_HEADER}${astToString(await openapiTS(document, { silent: true }))}`;
    const committed = readFileSync(new URL('clients/typescript/schema.d.ts', root), 'utf8');
    expect(committed === generated, 'clients/typescript/schema.d.ts is stale: run npm run docs').to.equal(true);
  });

  describe('signs as the service verifies (src/shared/wallet/signer.ts)', () => {
    const bodies: [string, string | Buffer][] = [
      ['no body', ''],
      ['a launch', JSON.stringify({ operatorId: 'op-1', playerRef: 'player-1', gameCode: 'dice', currency: 'EUR', lang: 'en', jurisdiction: 'MT' })],
      ['non-ASCII text', JSON.stringify({ reason: 'joueur a quitté — 退出 🎲' })],
      ['whitespace the service must not normalise', '{ "reason" : "x" }\n'],
      ['arbitrary bytes', Buffer.from([0, 255, 128, 10, 13, 0xc3, 0x28])],
    ];
    for (const [name, body] of bodies) {
      it(name, async () => {
        const bytes = typeof body === 'string' ? body : new Uint8Array(body);
        expect(await canonicalString('post', '/v1/session', '1700000000', bytes)).to.equal(serviceCanonical('post', '/v1/session', '1700000000', body));
        expect(await sign(SECRET, 'POST', '/v1/session', '1700000000', bytes)).to.equal(serviceSign(SECRET, 'POST', '/v1/session', '1700000000', body));
      });
    }
    it('a secret that is not hex, used as text too', async () => {
      expect(await sign('plain secret é', 'GET', '/v1/rounds', '1', '')).to.equal(serviceSign('plain secret é', 'GET', '/v1/rounds', '1', ''));
    });
  });

  describe('every request is signed over the bytes sent and the path without its query', () => {
    const sent: { request: Request; body: Buffer }[] = [];
    const client = createOperatorClient({
      baseUrl: 'https://rgs.example/',
      keyId: 'ak_test',
      secret: SECRET,
      now: () => 1_700_000_000_500,
      fetch: async (request) => {
        sent.push({ request, body: Buffer.from(await request.arrayBuffer()) });
        return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    beforeEach(() => (sent.length = 0));

    const expectSigned = (method: string, path: string) => {
      const [{ request, body }] = sent as [{ request: Request; body: Buffer }];
      expect(request.method).to.equal(method);
      expect(new URL(request.url).pathname).to.equal(path);
      expect(request.headers.get('x-rgs-key-id')).to.equal('ak_test');
      expect(request.headers.get('x-rgs-timestamp')).to.equal('1700000000');
      expect(request.headers.get('x-rgs-signature')).to.equal(serviceSign(SECRET, method, path, '1700000000', body));
      return body;
    };

    it('a POST: its JSON body as sent', async () => {
      await client.POST('/v1/session', { body: { operatorId: 'op-1', playerRef: 'p', gameCode: 'dice', currency: 'EUR', lang: 'en', jurisdiction: 'MT', mode: 'demo' } });
      const body = expectSigned('POST', '/v1/session');
      expect(JSON.parse(body.toString('utf8'))).to.include({ operatorId: 'op-1', mode: 'demo' });
    });

    it('a GET with a query: the query is sent, not signed; the body is empty', async () => {
      await client.GET('/v1/rounds', { params: { query: { from: '2026-01-01T00:00:00Z', limit: '10' } } });
      expect(new URL(sent[0]!.request.url).search).to.equal('?from=2026-01-01T00%3A00%3A00Z&limit=10');
      expect(expectSigned('GET', '/v1/rounds').length).to.equal(0);
    });

    it('a path parameter: signed as encoded on the wire', async () => {
      await client.GET('/v1/rounds/{roundId}/proof', { params: { path: { roundId: 'a b/c' } } });
      expectSigned('GET', '/v1/rounds/a%20b%2Fc/proof');
    });
  });
});
