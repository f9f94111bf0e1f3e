import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { GENERATED_DOCS } from '../../src/api/docs.js';
import { buildOpenApi } from '../../src/api/openapi.js';
import { compile } from '../../src/shared/platform/validation.js';
import {
  AppError,
  ERRORS,
  ERROR_CODES,
  SIGNATURE_ERROR_CODES,
  badGateway,
  botChallengeFailed,
  conflict,
  internalError,
  invalidRequest,
  ipNotAllowed,
  notFound,
  roundNotSettledYet,
  operatorMismatch,
  payloadTooLarge,
  rateLimited,
  serviceBusy,
  serviceUnavailable,
  sessionRejected,
  sandboxOnly,
  gameNotAvailable,
  betOutOfRange,
  featureBuyNotAvailable,
  signatureError,
} from '../../src/shared/platform/errors.js';
import { sessionCreateSchema, sessionTerminateSchema } from '../../src/api/schemas/session.js';
import { parseWalletResponse } from '../../src/shared/wallet/client.js';
import { schemaCompiler } from '../support/openapi.js';

// The generated documents (src/api/docs.ts): the committed copies are what the code produces
// today, the OpenAPI document is valid OpenAPI 3.1 whose schemas are valid JSON Schema 2020-12,
// its request schemas accept and refuse what the routes' own validation does, and its error
// schemas describe what the error table's factories build.

const root = new URL('../../', import.meta.url);

describe('generated documents (npm run docs)', () => {
  for (const [path, render] of Object.entries(GENERATED_DOCS)) {
    it(`${path} is what the code produces (run \`npm run docs\` after changing a route, a schema or an error table)`, () => {
      const committed = readFileSync(new URL(path, root), 'utf8');
      expect(committed === render(), `${path} is stale: run npm run docs`).to.equal(true);
    });
  }

  it('docs/openapi.json is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(buildOpenApi());
    expect(result.errors, JSON.stringify(result.errors, null, 2)).to.equal(undefined);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('every schema in it compiles as strict JSON Schema 2020-12 (no ajv-only keyword such as nullable)', () => {
    const document = buildOpenApi() as any;
    const compileSchema = schemaCompiler(document, { closed: false });
    const schemas: unknown[] = [];
    const walk = (node: any) => {
      if (!node || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'schema') schemas.push(value);
        else walk(value);
      }
    };
    walk(document.paths);
    walk(document.webhooks);
    schemas.push(...Object.values(document.components.schemas));
    expect(schemas.length).to.be.greaterThan(40);
    for (const schema of schemas) compileSchema(schema);
    expect(JSON.stringify(document)).to.not.include('"nullable"');
  });

  describe('request bodies: the document accepts what the route accepts, and refuses what it refuses', () => {
    const document = buildOpenApi() as any;
    const compileSchema = schemaCompiler(document, { closed: false });
    const base = { operatorId: 'op-1', playerRef: 'player-1', gameCode: 'dice', currency: 'EUR', lang: 'en', jurisdiction: 'MT' };
    const cases: [string, unknown][] = [
      ['a minimal launch', base],
      ['every optional field', { ...base, mode: 'demo', returnUrl: 'https://casino.example/lobby', clientSeed: 'my seed', requestUuid: '5f0c1b1e-8d5a-4c4e-9a51-1f1c2b3d4e5f', botChallengeToken: 't', rgLimits: { dailyLossMicro: '1000000', dailyWagerMicro: '0', sessionTimeSeconds: 60 } }],
      ['an unknown field (ignored, D9)', { ...base, favouriteColour: 'blue' }],
      ['a null optional field', { ...base, mode: null }],
      ['a null returnUrl', { ...base, returnUrl: null }],
      ['a null rgLimits', { ...base, rgLimits: null }],
      ['a null limit', { ...base, rgLimits: { dailyLossMicro: null } }],
      ['a number for a limit', { ...base, rgLimits: { dailyLossMicro: 100 } }],
      ['a limit over 2^63-1', { ...base, rgLimits: { dailyWagerMicro: '9223372036854775808' } }],
      ['sessionTimeSeconds below 60', { ...base, rgLimits: { sessionTimeSeconds: 59 } }],
      ['a playerRef that is an e-mail address', { ...base, playerRef: 'someone@example.com' }],
      ['a playerRef that is a phone number', { ...base, playerRef: '+44 20 7946 0958' }],
      ['a NUL in gameCode', { ...base, gameCode: 'di\u0000ce' }],
      ['a lower-case currency', { ...base, currency: 'eur' }],
      ['a missing field', { operatorId: 'op-1' }],
      ['a returnUrl that is not http(s)', { ...base, returnUrl: 'ftp://example.com' }],
      ['a clientSeed with ":"', { ...base, clientSeed: 'a:b' }],
      ['a malformed requestUuid', { ...base, requestUuid: 'not-a-uuid' }],
      ['sandboxSeeds (D35)', { ...base, sandboxSeeds: { serverSeed: 'ab'.repeat(32), clientSeed: 'c' } }],
      ['sandboxSeeds with an upper-case serverSeed', { ...base, sandboxSeeds: { serverSeed: 'AB'.repeat(32), clientSeed: 'c' } }],
      ['sandboxSeeds without clientSeed', { ...base, sandboxSeeds: { serverSeed: 'ab'.repeat(32) } }],
      ['sandboxSeeds null', { ...base, sandboxSeeds: null }],
    ];
    const route = compile(sessionCreateSchema);
    const documented = compileSchema(document.paths['/v1/session'].post.requestBody.content['application/json'].schema);
    for (const [name, body] of cases) {
      it(`POST /v1/session: ${name}`, () => {
        // the route's validator strips unknown fields from what it is given: a copy each
        expect(documented(structuredClone(body)), 'document').to.equal(route(structuredClone(body)));
      });
    }
    const terminate = compile(sessionTerminateSchema);
    const documentedTerminate = compileSchema(document.paths['/v1/session/{sessionId}/terminate'].post.requestBody.content['application/json'].schema);
    for (const body of [{}, { reason: 'fraud' }, { reason: null }, { reason: '' }, { reason: 5 }, { requestUuid: null }]) {
      it(`POST /v1/session/{sessionId}/terminate: ${JSON.stringify(body)}`, () => {
        expect(documentedTerminate(structuredClone(body)), 'document').to.equal(terminate(structuredClone(body)));
      });
    }
  });

  describe('the error schemas describe the bodies the error table builds', () => {
    const document = buildOpenApi() as any;
    const compileSchema = schemaCompiler(document, { closed: true });
    const built: AppError[] = [
      invalidRequest('RS_ERROR_WRONG_TYPES', 'a field has the wrong type or format', [{ path: '/currency', keyword: 'pattern', message: 'must match' }]),
      ...SIGNATURE_ERROR_CODES.map((code) => signatureError(code, 'no', '')),
      botChallengeFailed('no'),
      ipNotAllowed(),
      operatorMismatch(),
      notFound(),
      gameNotAvailable('no'),
      notFound('campaign_not_found', 'no campaign'),
      conflict('campaign_conflict', 'other terms'),
      betOutOfRange('no'),
      featureBuyNotAvailable('no'),
      notFound('round_not_found', 'round not found'),
      notFound('round_not_settled', 'not settled'),
      notFound('seed_not_revealed', 'later', { revealableAfter: new Date().toISOString() }),
      conflict('idempotency_key_reused', 'reused'),
      conflict('session_not_active', 'ended'),
      conflict('webhook_not_configured', 'no endpoint'),
      payloadTooLarge(65536),
      sessionRejected('kyc_required', 'no'),
      sandboxOnly('no'),
      rateLimited(3),
      internalError(),
      roundNotSettledYet('still played'),
      badGateway('wallet_unavailable', 'no answer'),
      badGateway('wallet_rejected', 'refused', { walletStatus: 'RS_ERROR_INVALID_PARTNER' }),
      serviceUnavailable('Redis'),
      serviceBusy(),
    ];

    it('builds every code of the table', () => {
      expect(new Set(built.map((error) => error.code))).to.deep.equal(new Set(ERROR_CODES));
    });

    for (const error of built) {
      it(`${error.code}: status ${ERRORS[error.code].status}, body and headers as documented`, () => {
        const validate = compileSchema(document.components.schemas[`Error.${error.code}`]);
        expect(validate(error.body()), JSON.stringify(validate.errors)).to.equal(true);
        expect(Object.keys(error.headers)).to.deep.equal(Object.keys((ERRORS[error.code] as { headers?: object }).headers ?? {}));
      });
    }
  });

  describe('the wallet answer the document describes is the one the service takes at its word (D13)', () => {
    const document = buildOpenApi() as any;
    const schema = compileSchema();
    function compileSchema() {
      return schemaCompiler(document, { closed: false })(document.webhooks['wallet.bet'].post.responses['200'].content['application/json'].schema);
    }
    const sent = '0b6f7a52-3c1d-4e2f-8a9b-1c2d3e4f5a6b';
    const answers: [string, Record<string, unknown>][] = [
      ['RS_OK with a balance', { status: 'RS_OK', requestUuid: sent, balanceMicro: '1000000', currency: 'EUR' }],
      ['a clean refusal', { status: 'RS_ERROR_NOT_ENOUGH_MONEY', requestUuid: sent, balanceMicro: '0', message: 'no funds' }],
      ['the requestUuid in upper case', { status: 'RS_OK', requestUuid: sent.toUpperCase() }],
      ['no requestUuid', { status: 'RS_OK' }],
      ['no status', { requestUuid: sent }],
      ['an unknown status', { status: 'RS_MAYBE', requestUuid: sent }],
    ];
    for (const [name, answer] of answers) {
      it(name, () => {
        const parsed = parseWalletResponse(200, JSON.stringify(answer), sent);
        expect(parsed.problem === undefined, parsed.problem).to.equal(schema(answer));
      });
    }
    it('balanceMicro is read only when the schema accepts it: a decimal string, never a number', () => {
      const balanceOf = (balanceMicro: unknown) => parseWalletResponse(200, JSON.stringify({ status: 'RS_OK', requestUuid: sent, balanceMicro }), sent).balanceMicro;
      expect(balanceOf('1500000')).to.equal(1_500_000n);
      for (const wrong of [1500000, '15.00', '1e6']) {
        expect(balanceOf(wrong)).to.equal(undefined);
        expect(schema({ status: 'RS_OK', requestUuid: sent, balanceMicro: wrong })).to.equal(false);
      }
    });
  });
});
