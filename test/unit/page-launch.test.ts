import { expect } from 'chai';
import { displayClaims, rememberLaunch, rememberedLaunch, safeReturnUrl } from '../../src/realtime/page/launch.js';
import { signSessionToken, type SessionClaims } from '../../src/shared/game/sessions/token.js';

// What the game page takes from its launch (src/realtime/page/launch.js): the token's lang
// and currency for its first words (contract 5.6), the operator's returnUrl as the exit
// (contract 2.2, D9: http(s) only), and what a reload, which has no token, needs to explain
// itself.

// a tab's sessionStorage as the page uses it: strings by key
class TabStorage {
  readonly items = new Map<string, string>();
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    this.items.set(key, String(value));
  }
}

const claims = (overrides: Partial<SessionClaims> = {}): SessionClaims => ({
  sub: 'spieler-ü-1',
  operatorId: 'op',
  sessionId: '00000000-0000-4000-8000-000000000000',
  currency: 'EUR',
  jurisdiction: 'MT',
  lang: 'de-AT',
  mode: 'real',
  rgLimits: {},
  iat: 1_700_000_000,
  exp: 1_700_003_600,
  ...overrides,
});

describe('the game page reads its launch (contract 2.2, 5.6)', () => {
  it("reads the session token's lang and currency before the channel answers", () => {
    expect(displayClaims(signSessionToken('secret', claims()))).to.deep.equal({ lang: 'de-AT', currency: 'EUR' });
    expect(displayClaims(signSessionToken('secret', claims({ lang: 'pt-BR', currency: 'BRL' })))).to.deep.equal({ lang: 'pt-BR', currency: 'BRL' });
  });

  it('reads nothing from a token that is not one', () => {
    for (const token of [null, '', 'not-a-token', 'a.!!!.c', `a.${Buffer.from('[1]').toString('base64url')}.c`]) {
      expect(displayClaims(token), String(token)).to.deep.equal({ lang: null, currency: null });
    }
  });

  it("offers the operator's http(s) returnUrl as the exit and nothing else", () => {
    expect(safeReturnUrl('https://casino.example/lobby?from=dice')).to.equal('https://casino.example/lobby?from=dice');
    expect(safeReturnUrl('http://casino.example')).to.equal('http://casino.example/');
    expect(safeReturnUrl('HTTPS://Casino.Example/Lobby')).to.equal('https://casino.example/Lobby');
    for (const text of ['javascript:alert(1)', 'JavaScript:alert(1)', 'data:text/html,<b>x</b>', 'ftp://casino.example', '/lobby', '//casino.example', '', null, undefined, 42]) {
      expect(safeReturnUrl(text), String(text)).to.equal(null);
    }
  });

  it('remembers for a reload the language and a safe returnUrl, never the token', () => {
    const storage = new TabStorage();
    expect(rememberedLaunch(storage)).to.equal(null);
    rememberLaunch(storage, { lang: 'de-AT', returnUrl: 'https://casino.example/lobby?from=dice' });
    expect(rememberedLaunch(storage)).to.deep.equal({ lang: 'de-AT', returnUrl: 'https://casino.example/lobby?from=dice' });
    expect([...storage.items.values()].join()).to.not.match(/token|eyJ/);
    // a later launch in the same tab replaces it
    rememberLaunch(storage, { lang: 'en', returnUrl: 'javascript:alert(1)' });
    expect(rememberedLaunch(storage)).to.deep.equal({ lang: 'en', returnUrl: null });
  });

  it('checks a remembered returnUrl again, and reads nothing from what it did not write', () => {
    const storage = new TabStorage();
    rememberLaunch(storage, { lang: 'en', returnUrl: null });
    const [key] = [...storage.items.keys()];
    storage.setItem(key!, JSON.stringify({ lang: 'en', returnUrl: 'javascript:alert(1)' }));
    expect(rememberedLaunch(storage)).to.deep.equal({ lang: 'en', returnUrl: null });
    for (const text of ['not json', 'null', '42', '"text"', JSON.stringify({ lang: 7, returnUrl: ['https://casino.example'] })]) {
      storage.setItem(key!, text);
      const remembered = rememberedLaunch(storage);
      expect(remembered === null || (remembered.lang === null && remembered.returnUrl === null), text).to.equal(true);
    }
  });

  it('works on without a storage, or with one that refuses to write', () => {
    expect(rememberedLaunch(null)).to.equal(null);
    expect(() => rememberLaunch(null, { lang: 'en', returnUrl: null })).to.not.throw();
    const full = { setItem: () => { throw new Error('QuotaExceededError'); } };
    expect(() => rememberLaunch(full, { lang: 'en', returnUrl: 'https://casino.example' })).to.not.throw();
  });
});
