import { expect } from 'chai';
import {
  LooserOverrideError,
  PROFILES,
  binds,
  jurisdictionRefusal,
  profileName,
  rulesFor,
  sessionProfile,
  setOverrides,
} from '../../src/shared/domain/jurisdictions.js';
import { jurisdictionCheck } from '../../src/shared/domain/dispute-pack.js';

// D44: the built-in profiles, an operator's overrides (stricter only, the bound named), and the
// refusals in the order placement applies them.

describe('jurisdiction profiles (D44)', () => {
  it('names the built-in profiles and plays any other code under default, whatever its case', () => {
    expect(profileName('GB')).to.equal('GB');
    expect(profileName('gb')).to.equal('GB');
    expect(profileName('ca-on')).to.equal('CA-ON');
    expect(profileName('MT')).to.equal('default');
    expect(profileName('default')).to.equal('default');
    expect(PROFILES.GB).to.deep.include({ minRoundMs: 5000, autoplay: false, realityCheckMinutes: 60, showElapsedTime: true, showNetPosition: true });
    expect(PROFILES.DE).to.deep.include({ minRoundMs: 5000, autoplay: false, realityCheckMinutes: null, maxStakeMicro: { EUR: 100_000n } });
    expect(PROFILES['CA-ON']).to.deep.include({ minRoundMs: 0, autoplay: false, showNetPosition: true, showElapsedTime: false });
    expect(PROFILES.default).to.deep.include({ minRoundMs: 0, autoplay: true, realityCheckMinutes: null, maxStakeMicro: {} });
  });

  it("keeps a session's rules for its currency: DE's bound in EUR, none in another currency", () => {
    expect(sessionProfile('DE', 'EUR', {})).to.deep.include({ profile: 'DE', maxStakeMicro: '100000' });
    expect(sessionProfile('DE', 'GBP', {})).to.deep.include({ profile: 'DE', maxStakeMicro: null });
    expect(binds(sessionProfile('MT', 'EUR', {}))).to.equal(false);
    expect(binds(sessionProfile('CA-ON', 'EUR', {}))).to.equal(false);
    expect(binds(sessionProfile('GB', 'EUR', {}))).to.equal(true);
    expect(binds(sessionProfile('DE', 'GBP', {}))).to.equal(true);
  });

  describe('overrides', () => {
    it('takes stricter values, over the profile and one another, and stores them per code in upper case', () => {
      const stored = setOverrides({}, 'gb', ['realityCheckMinutes=30', 'minRoundMs=8000']);
      expect(stored).to.deep.equal({ GB: { realityCheckMinutes: 30, minRoundMs: 8000 } });
      const more = setOverrides(stored, 'DE', ['maxStakeMicro.EUR=50000', 'maxStakeMicro.GBP=80000']);
      expect(more.GB).to.deep.equal(stored.GB);
      expect(rulesFor('DE', more).rules.maxStakeMicro).to.deep.equal({ EUR: 50_000n, GBP: 80_000n });
      expect(rulesFor('GB', more).rules).to.deep.include({ realityCheckMinutes: 30, minRoundMs: 8000 });
      // a code without a profile is made stricter than default
      expect(rulesFor('MT', setOverrides({}, 'MT', ['showNetPosition=true', 'autoplay=false']))).to.deep.include({
        profile: 'default',
        rules: { ...PROFILES.default, showNetPosition: true, autoplay: false, maxStakeMicro: {} },
      });
    });

    const refused = (stored: unknown, code: string, settings: string[]) => {
      try {
        setOverrides(stored, code, settings);
      } catch (err) {
        expect(err).to.be.instanceOf(LooserOverrideError);
        return (err as Error).message;
      }
      throw new Error(`${settings.join(' ')} was taken`);
    };

    it('refuses a looser value, naming the bound in force', () => {
      expect(refused({}, 'GB', ['minRoundMs=1000'])).to.equal('minRoundMs may only be stricter than in force: at least 5000');
      expect(refused({}, 'GB', ['realityCheckMinutes=90'])).to.equal('realityCheckMinutes may only be stricter than in force: at most 60');
      expect(refused({}, 'DE', ['autoplay=true'])).to.equal('autoplay may only be stricter than in force: false');
      expect(refused({}, 'GB', ['showNetPosition=false'])).to.equal('showNetPosition may only be stricter than in force: true');
      expect(refused({}, 'DE', ['maxStakeMicro.EUR=200000'])).to.equal('maxStakeMicro.EUR may only be stricter than in force: at most 100000');
      // an earlier override is a bound too, and the command's earlier settings
      const stricter = setOverrides({}, 'GB', ['realityCheckMinutes=30']);
      expect(refused(stricter, 'GB', ['realityCheckMinutes=45'])).to.equal('realityCheckMinutes may only be stricter than in force: at most 30');
      expect(refused({}, 'MT', ['minRoundMs=3000', 'minRoundMs=2000'])).to.equal('minRoundMs may only be stricter than in force: at least 3000');
    });

    it('refuses keys and values no rule takes', () => {
      expect(refused({}, 'GB', ['turbo=false'])).to.match(/^unknown key "turbo"/);
      expect(refused({}, 'GB', ['minRoundMs=-1'])).to.match(/whole number of milliseconds/);
      expect(refused({}, 'GB', ['realityCheckMinutes=0'])).to.match(/from 1 to 1440/);
      expect(refused({}, 'GB', ['autoplay=no'])).to.match(/true or false/);
      expect(refused({}, 'DE', ['maxStakeMicro=100'])).to.match(/per currency/);
      expect(refused({}, 'DE', ['maxStakeMicro.EUR=1.5'])).to.match(/positive whole number/);
      expect(refused({}, 'DE', ['minRoundMs.EUR=9000'])).to.match(/not set per currency/);
      expect(refused({}, 'G B', ['minRoundMs=9000'])).to.match(/invalid jurisdiction code/);
      expect(refused({}, 'GB', ['minRoundMs'])).to.match(/key=value/);
    });

    it("lays the operator's overrides of default under every code without a profile of its own", () => {
      const stored = setOverrides({}, 'default', ['showNetPosition=true', 'minRoundMs=2000']);
      expect(Object.keys(stored)).to.deep.equal(['default']);
      expect(rulesFor('MT', stored).rules).to.deep.include({ showNetPosition: true, minRoundMs: 2000 });
      expect(rulesFor('GB', stored).rules.minRoundMs).to.equal(5000);
      // a code's own override is bound by default's
      expect(refused(stored, 'MT', ['minRoundMs=1000'])).to.equal('minRoundMs may only be stricter than in force: at least 2000');
      expect(rulesFor('MT', setOverrides(stored, 'MT', ['minRoundMs=3000'])).rules.minRoundMs).to.equal(3000);
    });

    it('ignores a stored value looser than the profile (never loosening), and malformed stores', () => {
      expect(rulesFor('GB', { GB: { minRoundMs: 100, realityCheckMinutes: 20 } }).rules).to.deep.include({ minRoundMs: 5000, realityCheckMinutes: 20 });
      expect(rulesFor('DE', { DE: { maxStakeMicro: { EUR: 'x' } } }).rules.maxStakeMicro).to.deep.equal({ EUR: 100_000n });
      expect(rulesFor('GB', 'nonsense').rules).to.deep.equal({ ...PROFILES.GB, maxStakeMicro: {} });
    });
  });

  describe("the dispute pack's check", () => {
    const round = (rules: Record<string, unknown>) => ({ jurisdiction: { code: 'de', profile: 'DE', rules } });
    it('holds the bet to the profile round.json names, and says when a pack names none', () => {
      expect(jurisdictionCheck(round({ maxStakeMicro: '100000' }), { amountMicro: '100000' })).to.deep.equal({ name: 'jurisdiction', ok: true, detail: 'de under DE' });
      expect(jurisdictionCheck(round({ maxStakeMicro: '100000' }), { amountMicro: '100001' }).ok).to.equal(false);
      expect(jurisdictionCheck(round({ maxStakeMicro: null }), { amountMicro: '999999999' }).ok).to.equal(true);
      expect(jurisdictionCheck({ jurisdiction: { code: 'XX', profile: 'made-up', rules: {} } }, { amountMicro: '1' }).ok).to.equal(false);
      expect(jurisdictionCheck({ jurisdiction: 'GB' }, { amountMicro: '1' }).ok).to.equal(false);
      expect(jurisdictionCheck({ jurisdiction: { code: 'XX', profile: 'constructor', rules: {} } }, { amountMicro: '1' }).ok).to.equal(false);
      expect(jurisdictionCheck({}, { amountMicro: '1' })).to.deep.include({ ok: true, detail: 'no profile named: the pack was made before jurisdiction profiles' });
    });
  });

  describe('refusals', () => {
    const now = new Date('2026-12-01T12:00:00.000Z');
    const at = (ms: number) => new Date(now.getTime() + ms);
    const facts = { realityCheckDueAt: null, lastBetAt: null, minRoundMs: 5000, maxStakeMicro: 100_000n };

    it('refuses while a reality check is due, first', () => {
      expect(jurisdictionRefusal({ ...facts, realityCheckDueAt: now, lastBetAt: at(-1) }, 999_999n, now)).to.equal('reality_check_due');
      expect(jurisdictionRefusal({ ...facts, realityCheckDueAt: at(1) }, 100_000n, now)).to.equal(undefined);
    });

    it('refuses a bet less than minRoundMs after the previous one, then a stake above the bound', () => {
      expect(jurisdictionRefusal({ ...facts, lastBetAt: at(-4999) }, 1n, now)).to.equal('round_too_soon');
      expect(jurisdictionRefusal({ ...facts, lastBetAt: at(-5000) }, 100_000n, now)).to.equal(undefined);
      expect(jurisdictionRefusal({ ...facts, lastBetAt: at(-5000) }, 100_001n, now)).to.equal('stake_above_jurisdiction_max');
      expect(jurisdictionRefusal({ ...facts, maxStakeMicro: null }, 10n ** 15n, now)).to.equal(undefined);
    });
  });
});
