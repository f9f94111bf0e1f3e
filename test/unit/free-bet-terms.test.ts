import { expect } from 'chai';
import { MAX_PLAYERS, readCampaignTerms, termsDigest, windowProblems, type CampaignTermsInput } from '../../src/shared/game/freebets/terms.js';
import { isPlayerRef } from '../../src/shared/platform/validation.js';

// D42: a campaign's terms as written, their bounds, and the digest that tells a retry from a
// conflict.

const NOW = new Date('2026-12-05T12:00:00.000Z');
const DAY = 86_400_000;
const input = (overrides: Partial<CampaignTermsInput> = {}): CampaignTermsInput => ({
  campaignRef: 'welcome-2026:01',
  gameCode: 'dice',
  currency: 'EUR',
  stakeMicro: '100000',
  rounds: 10,
  playerRefs: ['b', 'a', 'c'],
  expiresAt: new Date(NOW.getTime() + 7 * DAY).toISOString(),
  ...overrides,
});
const read = (overrides: Partial<CampaignTermsInput> = {}) => readCampaignTerms(input(overrides));
const paths = (overrides: Partial<CampaignTermsInput>) => read(overrides).problems.map((problem) => problem.path);

describe('free-bet campaign terms (D42)', () => {
  it('reads valid terms: the stake a bigint, instants as dates, validFrom left out when not given', () => {
    const { terms, problems } = read();
    expect(problems).to.deep.equal([]);
    expect(terms!.stakeMicro).to.equal(100000n);
    expect(terms!.validFrom).to.equal(undefined);
    expect(terms!.featureBuy).to.equal(false);
  });

  it('refuses each bound with the field named, never the value', () => {
    expect(paths({ campaignRef: 'has space' })).to.deep.equal(['/campaignRef']);
    expect(paths({ campaignRef: 'x'.repeat(65) })).to.deep.equal(['/campaignRef']);
    expect(paths({ campaignRef: '' })).to.deep.equal(['/campaignRef']);
    expect(paths({ stakeMicro: '0' })).to.deep.equal(['/stakeMicro']);
    expect(paths({ stakeMicro: '01' })).to.deep.equal(['/stakeMicro']);
    expect(paths({ stakeMicro: '9223372036854775808' })).to.deep.equal(['/stakeMicro']);
    expect(paths({ rounds: 0 })).to.deep.equal(['/rounds']);
    expect(paths({ rounds: 1001 })).to.deep.equal(['/rounds']);
    expect(paths({ rounds: 1.5 })).to.deep.equal(['/rounds']);
    expect(paths({ playerRefs: [] })).to.deep.equal(['/playerRefs']);
    expect(paths({ playerRefs: Array.from({ length: MAX_PLAYERS + 1 }, (_, i) => `p${i}`) })).to.deep.equal(['/playerRefs']);
    expect(paths({ playerRefs: ['a', 'b', 'a'] })).to.deep.equal(['/playerRefs/2']);
    expect(paths({ playerRefs: ['ok', 'who@example.com', '+1 555 0100 200'] })).to.deep.equal(['/playerRefs/1', '/playerRefs/2']);
    expect(paths({ currency: 'eur' })).to.deep.equal(['/currency']);
    expect(paths({ expiresAt: '2026-12-06' })).to.deep.equal(['/expiresAt']);
    expect(paths({ validFrom: 'soon' })).to.deep.equal(['/validFrom']);
    for (const problem of read({ playerRefs: ['who@example.com'] }).problems) expect(problem.message).to.not.include('example');
  });

  it('names at most 20 playerRef problems', () => {
    expect(read({ playerRefs: Array.from({ length: 100 }, () => 'same') }).problems).to.have.length(20);
  });

  it('reads a playerRef as the launch schema does: code points, not UTF-16 units', () => {
    expect(isPlayerRef('😀'.repeat(128))).to.equal(true);
    expect(isPlayerRef('😀'.repeat(129))).to.equal(false);
    expect(isPlayerRef('a\u0000b')).to.equal(false);
    expect(isPlayerRef('\uD800')).to.equal(false);
  });

  it('bounds the window: after validFrom and now, at most 90 days from now', () => {
    const window = (overrides: Partial<CampaignTermsInput>) => windowProblems(read(overrides).terms!, NOW).map((problem) => problem.keyword);
    expect(window({})).to.deep.equal([]);
    expect(window({ expiresAt: new Date(NOW.getTime() + 90 * DAY).toISOString() })).to.deep.equal([]);
    expect(window({ expiresAt: new Date(NOW.getTime() + 90 * DAY + 1).toISOString() })).to.deep.equal(['formatMaximum']);
    expect(window({ expiresAt: NOW.toISOString() })).to.deep.equal(['formatMinimum']);
    expect(window({ validFrom: new Date(NOW.getTime() + 8 * DAY).toISOString() })).to.deep.equal(['formatMinimum']);
    expect(window({ validFrom: new Date(NOW.getTime() - 8 * DAY).toISOString(), expiresAt: new Date(NOW.getTime() - DAY).toISOString() })).to.deep.equal(['formatMinimum']);
  });

  it('digests the terms: the playerRefs in any order and an instant in any zone are the same terms; any other change is not', () => {
    const digest = (overrides: Partial<CampaignTermsInput> = {}) => termsDigest(read(overrides).terms!);
    expect(digest()).to.match(/^[0-9a-f]{64}$/);
    expect(digest({ playerRefs: ['c', 'b', 'a'] })).to.equal(digest());
    const expires = new Date(NOW.getTime() + 7 * DAY);
    expect(digest({ expiresAt: '2026-12-12T13:00:00+01:00' })).to.equal(digest({ expiresAt: expires.toISOString() }));
    const others: Partial<CampaignTermsInput>[] = [
      { campaignRef: 'other' },
      { gameCode: 'crash' },
      { currency: 'USD' },
      { stakeMicro: '100001' },
      { rounds: 11 },
      { playerRefs: ['a', 'b'] },
      { playerRefs: ['a', 'b', 'c', 'd'] },
      { validFrom: NOW.toISOString() },
      { expiresAt: new Date(NOW.getTime() + 8 * DAY).toISOString() },
      { featureBuy: true },
    ];
    const digests = new Set(others.map((other) => digest(other)));
    expect(digests.size).to.equal(others.length);
    expect(digests.has(digest())).to.equal(false);
  });
});
