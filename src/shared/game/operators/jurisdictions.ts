import type { Db, Prisma } from '../../platform/db/client.js';
import { CredentialError } from '../../wallet/credentials.js';
import { PROFILES, overrideKey, rulesFor, setOverrides, type ProfileName, type ProfileRules } from '../../domain/jurisdictions.js';

// An operator's jurisdiction overrides (D44, `rgs jurisdiction set|show`): stricter values per
// code over the built-in profiles (those of `default` under every code without a profile). A
// session takes the rules in force at its launch.

// the rules as an operator reads them: amounts as decimal strings (D18)
const written = (rules: ProfileRules) => ({
  ...rules,
  maxStakeMicro: Object.fromEntries(Object.entries(rules.maxStakeMicro).map(([currency, micro]) => [currency, micro.toString()])),
});

export function describeJurisdiction(code: string, stored: unknown) {
  const { profile, rules } = rulesFor(code, stored);
  const key = overrideKey(code);
  const overrides = stored && typeof stored === 'object' ? (stored as Record<string, unknown>)[key] : undefined;
  return { code: key, profile, rules: written(rules), overrides: overrides ?? {} };
}

async function storedOverrides(db: Db, operatorId: string): Promise<Prisma.JsonValue> {
  const operator = await db.operator.findUnique({ where: { id: operatorId }, select: { jurisdictionOverrides: true } });
  if (!operator) throw new CredentialError(`operator ${operatorId} does not exist`);
  return operator.jurisdictionOverrides;
}

// Each setting is checked against the rules in force, the earlier settings of the same command
// included; a looser one refuses the whole command, naming the bound, and nothing is stored.
// The operator's row is updated only if its overrides are still the ones read (a concurrent
// change makes this one retry on what that change stored).
export async function setJurisdiction(db: Db, operatorId: string, code: string, settings: string[]) {
  for (;;) {
    const before = await storedOverrides(db, operatorId);
    const after = setOverrides(before, code, settings);
    const { count } = await db.operator.updateMany({
      where: { id: operatorId, jurisdictionOverrides: { equals: before ?? {} } },
      data: { jurisdictionOverrides: after as Prisma.InputJsonValue },
    });
    if (count === 1) return describeJurisdiction(code, after);
  }
}

// every built-in profile and every code the operator overrides, with the rules in force
export async function showJurisdictions(db: Db, operatorId: string, code?: string) {
  const stored = await storedOverrides(db, operatorId);
  if (code !== undefined) return describeJurisdiction(code, stored);
  const codes = new Set<string>([...(Object.keys(PROFILES) as ProfileName[]), ...Object.keys((stored as Record<string, unknown> | null) ?? {})]);
  return [...codes].map((each) => describeJurisdiction(each, stored));
}
