// Jurisdiction profiles (D44): the rules a regulator sets for the game itself, as data. A
// session plays under the profile of its `jurisdiction` claim (contract 5.6), made stricter by
// its operator's overrides for that code; a code without a profile plays under `default`. The
// sources of each rule are in docs/decisions/D44-jurisdiction-profiles.md and the operator
// guide's "Jurisdictions". Pure; stakes are bigint micro-units (D18).

export type ProfileRules = {
  // the least time between two bets of a session, whatever the game
  minRoundMs: number;
  // whether the page may offer autoplay (no game of this service has any: D44 keeps the flag
  // so that a page, and a reader of the round, can say the profile forbids it)
  autoplay: boolean;
  // bets are refused every N minutes of play until the player acknowledges a reality check;
  // null: no reality check
  realityCheckMinutes: number | null;
  showElapsedTime: boolean;
  showNetPosition: boolean;
  // the most one bet may debit, per currency (a currency absent: no bound)
  maxStakeMicro: Readonly<Record<string, bigint>>;
};

export type ProfileName = 'GB' | 'DE' | 'CA-ON' | 'default';

const DEFAULT: ProfileRules = { minRoundMs: 0, autoplay: true, realityCheckMinutes: null, showElapsedTime: false, showNetPosition: false, maxStakeMicro: {} };

// D44's table. GB: UKGC RTS 13 and 14; DE: GlüStV 2021 §22a; CA-ON: AGCO Registrar's
// Standards for Internet Gaming (the decision record names each rule's source)
export const PROFILES: Readonly<Record<ProfileName, ProfileRules>> = {
  GB: { ...DEFAULT, minRoundMs: 5000, autoplay: false, realityCheckMinutes: 60, showElapsedTime: true, showNetPosition: true },
  DE: { ...DEFAULT, minRoundMs: 5000, autoplay: false, maxStakeMicro: { EUR: 100_000n } },
  'CA-ON': { ...DEFAULT, autoplay: false, showNetPosition: true },
  default: DEFAULT,
};

export const PROFILE_KEYS = ['minRoundMs', 'autoplay', 'realityCheckMinutes', 'showElapsedTime', 'showNetPosition', 'maxStakeMicro'] as const;

// the profile a code plays under: its own, matched without regard to case, or `default`
export function profileName(code: string): ProfileName {
  const upper = code.toUpperCase();
  return (Object.keys(PROFILES) as ProfileName[]).find((name) => name !== 'default' && name === upper) ?? 'default';
}

// An operator's overrides as stored (operators.jurisdiction_overrides): per code (overrideKey),
// the keys it set, bigints as decimal strings so that they survive JSON
export type StoredOverride = {
  minRoundMs?: number;
  autoplay?: boolean;
  realityCheckMinutes?: number;
  showElapsedTime?: boolean;
  showNetPosition?: boolean;
  maxStakeMicro?: Record<string, string>;
};
export type StoredOverrides = Record<string, StoredOverride>;

// The rules in force for a code: the profile's, with the operator's overrides for the code
// laid over them. The overrides were checked stricter when set; read back, any that is not
// (stored before a profile tightened, or written by hand) is ignored, never loosening.
// The operator's overrides of `default` lie under those of every code that plays under it.
export function rulesFor(code: string, stored: unknown): { profile: ProfileName; rules: ProfileRules } {
  const profile = profileName(code);
  const base = PROFILES[profile];
  const layers = [profile === 'default' && overrideKey(code) !== 'default' ? overrideOf(stored, 'default') : undefined, overrideOf(stored, code)];
  const rules: ProfileRules = { ...base, maxStakeMicro: { ...base.maxStakeMicro } };
  for (const override of layers) {
    if (!override) continue;
    for (const [key, value] of Object.entries(override)) {
      try {
        Object.assign(rules, applyOne(rules, key, value));
      } catch {
        // a looser or malformed stored value: the profile's holds
      }
    }
  }
  return { profile, rules };
}

// how the overrides of a code are keyed: the code in upper case, `default` as it is written
export const overrideKey = (code: string): string => (code.toUpperCase() === 'DEFAULT' ? 'default' : code.toUpperCase());

function overrideOf(stored: unknown, code: string): StoredOverride | undefined {
  if (!stored || typeof stored !== 'object') return undefined;
  const entry = (stored as Record<string, unknown>)[overrideKey(code)];
  return entry && typeof entry === 'object' ? (entry as StoredOverride) : undefined;
}

export class LooserOverrideError extends Error {
  override name = 'JurisdictionOverrideError';
}

// Applies `key=value` settings (the CLI's form) to an operator's stored overrides for a code,
// each checked against the rules in force before it: a value looser than the bound is refused
// with the bound named. Returns the new stored overrides.
export function setOverrides(stored: unknown, code: string, settings: string[]): StoredOverrides {
  if (!/^[A-Za-z0-9-]{1,16}$/.test(code)) throw new LooserOverrideError(`invalid jurisdiction code: ${code}`);
  const key = overrideKey(code);
  const all: StoredOverrides = stored && typeof stored === 'object' ? { ...(stored as StoredOverrides) } : {};
  const { rules } = rulesFor(key, all);
  const next: StoredOverride = { ...(all[key] ?? {}) };
  let current = rules;
  for (const setting of settings) {
    const match = /^([A-Za-z]+)(?:\.([A-Z]{3}))?=(.*)$/.exec(setting);
    if (!match) throw new LooserOverrideError(`--set must look like key=value or maxStakeMicro.EUR=value (got "${setting}")`);
    const [, name, currency, raw] = match as unknown as [string, string, string | undefined, string];
    const value = parseSetting(name, currency, raw);
    current = { ...current, ...applyOne(current, name, value) };
    if (name === 'maxStakeMicro') next.maxStakeMicro = { ...(next.maxStakeMicro ?? {}), ...(value as Record<string, string>) };
    else (next as Record<string, unknown>)[name] = value;
  }
  all[key] = next;
  return all;
}

// a CLI value as it is stored; a key or a value that no rule takes is refused
function parseSetting(name: string, currency: string | undefined, raw: string): unknown {
  if (name === 'maxStakeMicro') {
    if (!currency) throw new LooserOverrideError('maxStakeMicro is set per currency: maxStakeMicro.EUR=100000');
    if (!/^[1-9][0-9]{0,17}$/.test(raw)) throw new LooserOverrideError('maxStakeMicro needs a positive whole number of micro-units (1.00 = 100000)');
    return { [currency]: raw };
  }
  if (currency) throw new LooserOverrideError(`${name} is not set per currency`);
  switch (name) {
    case 'minRoundMs':
      if (!/^[0-9]{1,7}$/.test(raw) || Number(raw) > 3_600_000) throw new LooserOverrideError('minRoundMs needs a whole number of milliseconds, at most 3600000');
      return Number(raw);
    case 'realityCheckMinutes':
      if (!/^[0-9]{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > 1440) throw new LooserOverrideError('realityCheckMinutes needs a whole number of minutes from 1 to 1440');
      return Number(raw);
    case 'autoplay':
    case 'showElapsedTime':
    case 'showNetPosition':
      if (raw !== 'true' && raw !== 'false') throw new LooserOverrideError(`${name} needs true or false`);
      return raw === 'true';
    default:
      throw new LooserOverrideError(`unknown key "${name}" (known: ${PROFILE_KEYS.join(', ')})`);
  }
}

// one stored setting over the rules in force: the rules it changes, or the bound it would loosen
function applyOne(rules: ProfileRules, key: string, value: unknown): Partial<ProfileRules> {
  const looser = (bound: string) => new LooserOverrideError(`${key} may only be stricter than in force: ${bound}`);
  switch (key) {
    case 'minRoundMs':
      if (typeof value !== 'number' || value < rules.minRoundMs) throw looser(`at least ${rules.minRoundMs}`);
      return { minRoundMs: value };
    case 'realityCheckMinutes':
      if (typeof value !== 'number' || (rules.realityCheckMinutes !== null && value > rules.realityCheckMinutes)) throw looser(`at most ${rules.realityCheckMinutes}`);
      return { realityCheckMinutes: value };
    case 'autoplay':
      if (typeof value !== 'boolean' || (value && !rules.autoplay)) throw looser('false');
      return { autoplay: value };
    case 'showElapsedTime':
    case 'showNetPosition':
      if (typeof value !== 'boolean' || (!value && rules[key])) throw looser('true');
      return { [key]: value };
    case 'maxStakeMicro': {
      if (!value || typeof value !== 'object') throw looser('a bound per currency');
      const bounds = { ...rules.maxStakeMicro };
      for (const [currency, micro] of Object.entries(value as Record<string, string>)) {
        const amount = BigInt(micro);
        const bound = rules.maxStakeMicro[currency];
        if (bound !== undefined && amount > bound) throw new LooserOverrideError(`maxStakeMicro.${currency} may only be stricter than in force: at most ${bound}`);
        bounds[currency] = amount;
      }
      return { maxStakeMicro: bounds };
    }
    default:
      throw new LooserOverrideError(`unknown key "${key}"`);
  }
}

// What a session keeps of its rules (sessions.jurisdiction_profile): the profile's name and
// the rules for the session's one currency, so that every read names what applied
export type SessionProfile = {
  profile: ProfileName;
  minRoundMs: number;
  autoplay: boolean;
  realityCheckMinutes: number | null;
  showElapsedTime: boolean;
  showNetPosition: boolean;
  maxStakeMicro: string | null;
};

export function sessionProfile(code: string, currency: string, stored: unknown): SessionProfile {
  const { profile, rules } = rulesFor(code, stored);
  const max = rules.maxStakeMicro[currency];
  return {
    profile,
    minRoundMs: rules.minRoundMs,
    autoplay: rules.autoplay,
    realityCheckMinutes: rules.realityCheckMinutes,
    showElapsedTime: rules.showElapsedTime,
    showNetPosition: rules.showNetPosition,
    maxStakeMicro: max === undefined ? null : max.toString(),
  };
}

// whether the profile refuses any bet (placement then reads the session's rules; a session
// that binds nothing is placed by the common case, bets/place.ts)
export const binds = (profile: SessionProfile): boolean =>
  profile.minRoundMs > 0 || profile.realityCheckMinutes !== null || profile.maxStakeMicro !== null;

// D44's refusals, in the order placement applies them: a reality check due, a bet too soon
// after the session's previous one, a stake above the profile's bound (`debitMicro`: what the
// bet debits, a bought feature's whole price)
export type JurisdictionFacts = { realityCheckDueAt: Date | null; lastBetAt: Date | null; minRoundMs: number; maxStakeMicro: bigint | null };

export function jurisdictionRefusal(
  facts: JurisdictionFacts,
  debitMicro: bigint,
  now: Date,
): 'reality_check_due' | 'round_too_soon' | 'stake_above_jurisdiction_max' | undefined {
  if (facts.realityCheckDueAt !== null && facts.realityCheckDueAt <= now) return 'reality_check_due';
  if (facts.lastBetAt !== null && now.getTime() - facts.lastBetAt.getTime() < facts.minRoundMs) return 'round_too_soon';
  if (facts.maxStakeMicro !== null && debitMicro > facts.maxStakeMicro) return 'stake_above_jurisdiction_max';
  return undefined;
}

// How every read names the profile a session played under (D44): the session's code, the
// profile applied, and its rules for the session's currency
export type ProfileView = { code: string; profile: string; rules: Omit<SessionProfile, 'profile'> };

export function profileView(code: string, kept: unknown): ProfileView {
  const { profile, ...rules } = kept as SessionProfile;
  return { code, profile, rules };
}
