import { expect } from 'chai';
import { FRAME_ANCESTORS_CACHE_MS, FrameAncestorsCache, contentSecurityPolicy } from '../../../src/realtime/launch-page.js';
import { updateOperator } from '../../../src/shared/game/operators/operators.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { send } from '../../support/signed-client.js';

// The launch page's headers (D16, contract 5.5): frame-ancestors per operator, cached at
// most 60 s, a strict script/style policy, HSTS.
describe('launch page /play/{gameCode}', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ PUBLIC_URL: 'https://rgs.example:8443' }, ['api', 'realtime']);
  });
  after(() => h.close());

  // the launchUrl names PUBLIC_URL; the harness listens on a port of its own
  const onHarness = (launchUrl: string) => {
    const url = new URL(launchUrl);
    return `${h.baseUrl}${url.pathname}${url.search}`;
  };
  const policyOf = (csp: string | null) =>
    Object.fromEntries((csp ?? '').split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));

  it('serves the page with the operator frame-ancestors, strict script and style sources and HSTS', async () => {
    const operator = await h.onboard({ frameAncestors: ['https://casino.example', 'https://m.casino.example'] });
    const launch = await operator.launch({ mode: 'demo' });
    const page = await send(onHarness(launch.body.launchUrl), {});
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.text).to.include('<html');
    const csp = policyOf(page.headers.get('content-security-policy'));
    // no directive beyond what the page needs: default-src 'none' covers the rest
    expect(Object.keys(csp).sort()).to.deep.equal(
      ['base-uri', 'connect-src', 'default-src', 'form-action', 'frame-ancestors', 'img-src', 'script-src', 'style-src'],
    );
    expect(csp['frame-ancestors']).to.equal("'self' https://casino.example https://m.casino.example");
    expect(csp['script-src']).to.equal("'self'");
    expect(csp['style-src']).to.equal("'self'");
    expect(csp['default-src']).to.equal("'none'");
    // the one image is the page's empty data: icon
    expect(csp['img-src']).to.equal('data:');
    expect(csp['base-uri']).to.equal("'none'");
    expect(csp['form-action']).to.equal("'none'");
    // D24: the page connects to the service's own origin only, never to any ws:/wss: host
    expect(csp['connect-src']).to.equal('https://rgs.example:8443 wss://rgs.example:8443');
    expect(page.headers.get('strict-transport-security')).to.equal('max-age=63072000; includeSubDomains; preload');
    // no inline script or style that the policy would block
    expect(page.text).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page.text).to.not.match(/<style|\sstyle="/);
    // contract 2.2: the exit to the returnUrl, hidden until the channel names one, leaves in
    // the top window when the casino frames the game, and tells the casino no address
    const exit = /<a id="exit-link"[^>]*>/.exec(page.text)?.[0] ?? '';
    expect(exit).to.match(/\shidden[\s>]/);
    expect(exit).to.include('target="_top"');
    expect(exit).to.include('rel="noreferrer"');
    expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
  });

  it("answers 'self' only when the operator lists no ancestors or the token is unreadable", async () => {
    const operator = await h.onboard();
    const launch = await operator.launch({ mode: 'demo' });
    expect(policyOf((await send(onHarness(launch.body.launchUrl), {})).headers.get('content-security-policy'))['frame-ancestors']).to.equal("'self'");
    const forged = await send(`${h.baseUrl}/play/dice?token=not-a-token`, {});
    expect(forged.status).to.equal(200);
    expect(policyOf(forged.headers.get('content-security-policy'))['frame-ancestors']).to.equal("'self'");
  });

  it('serves its assets and the Socket.IO client from the service; unknown games and files are 404', async () => {
    expect((await send(`${h.baseUrl}/play/craps?token=x`, {})).status).to.equal(404);
    expect((await send(`${h.baseUrl}/play/assets/nope.js`, {})).status).to.equal(404);
    expect((await send(`${h.baseUrl}/play/assets/..%2Fserver.ts`, {})).status).to.equal(404);
    // the language files, imported by the page when it speaks that language; crash's part
    for (const file of ['lang-en.js', 'lang-de.js', 'i18n.js', 'money.js', 'launch.js', 'crash.js', 'crash-curve.js']) {
      const asset = await send(`${h.baseUrl}/play/assets/${file}`, {});
      expect(asset.status, file).to.equal(200);
      expect(asset.headers.get('content-type'), file).to.match(/^text\/javascript/);
    }
    // the unit tests' type declarations are not the page's
    expect((await send(`${h.baseUrl}/play/assets/money.d.ts`, {})).status).to.equal(404);
    const client = await send(`${h.baseUrl}/socket.io/socket.io.min.js`, {});
    expect(client.status).to.equal(200);
    expect(client.headers.get('content-type')).to.match(/javascript/);
  });

  it("marks the page with its address's game, whose stage and controls it shows from the first paint (D39, D40)", async () => {
    for (const game of ['dice', 'crash']) {
      const page = await send(`${h.baseUrl}/play/${game}?token=x`, {});
      expect(page.status, game).to.equal(200);
      expect(/<body[^>]*>/.exec(page.text)?.[0], game).to.include(`data-game="${game}"`);
    }
  });

  it('applies a frame-ancestors change within the 60 s cache bound', async () => {
    const operator = await h.onboard({ frameAncestors: ['https://old.example'] });
    const launch = await operator.launch({ mode: 'demo' });
    const frameAncestors = async () => policyOf((await send(onHarness(launch.body.launchUrl), {})).headers.get('content-security-policy'))['frame-ancestors'];
    expect(await frameAncestors()).to.equal("'self' https://old.example");
    await updateOperator(h.svc.db, operator.operatorId, { frameAncestors: ['https://new.example'] });
    // the cache may still answer the old list, never for longer than the bound: the cache
    // itself is checked against a clock below
    expect(["'self' https://old.example", "'self' https://new.example"]).to.include(await frameAncestors());
  });

  it('the frame-ancestors cache reloads after at most 60 s', async () => {
    let now = 0;
    let loads = 0;
    let list = ['https://a.example'];
    const cache = new FrameAncestorsCache(async () => {
      loads += 1;
      return list;
    }, () => now);
    expect(await cache.get('op')).to.deep.equal(['https://a.example']);
    list = ['https://b.example'];
    now = FRAME_ANCESTORS_CACHE_MS - 1;
    expect(await cache.get('op')).to.deep.equal(['https://a.example']);
    now = FRAME_ANCESTORS_CACHE_MS;
    expect(await cache.get('op')).to.deep.equal(['https://b.example']);
    expect(loads).to.equal(2);
    expect(contentSecurityPolicy([], 'http://127.0.0.1:3000')).to.include("frame-ancestors 'self'");
    expect(contentSecurityPolicy([], 'http://127.0.0.1:3000')).to.include('connect-src http://127.0.0.1:3000 ws://127.0.0.1:3000;');
  });
});
