import { expect } from 'chai';
import { displayClaims, safeReturnUrl } from '../../src/realtime/page/launch.js';
import { signSessionToken, type SessionClaims } from '../../src/shared/game/sessions/token.js';

// What the game page takes from its launch (src/realtime/page/launch.js): the token's lang
// and currency for its first words (contract 5.6), and the operator's returnUrl as the exit
// (contract 2.2, D9: http(s) only).

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
});
