import ipaddr from 'ipaddr.js';
import type { Db } from '../../platform/db/client.js';
import { Prisma } from '../../platform/db/client.js';
import { type StoredRgMaxima, type RgField } from '../../domain/rg-limits.js';
import { CredentialError, sealedCredential } from '../../wallet/credentials.js';
import { frameAncestorProblem, walletUrlFormatProblem, walletUrlProductionProblem } from '../../platform/address-policy.js';

// Operator onboarding and settings (contract 5.3, 5.4, DECISIONS D7, D11, D16, D25).

export type OperatorSettings = {
  walletUrl?: string;
  // D25: in production the wallet URL may resolve to a non-public address
  walletUrlPrivateAllowed?: boolean;
  currencies?: string[];
  ipAllowList?: string[];
  jurisdictionsBlocked?: string[];
  frameAncestors?: string[];
  signatureWindowSeconds?: number;
  suspended?: boolean;
  // D35: a sandbox operator (ten times the rate limits, launches may carry sandboxSeeds)
  sandbox?: boolean;
  rgMax?: { jurisdiction: string; maxima: Partial<Record<RgField, string>> }[];
};

export class OperatorInputError extends Error {
  override name = 'OperatorInputError';
}

const OPERATOR_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const CURRENCY = /^[A-Z0-9]{3,10}$/;
const JURISDICTION = /^[A-Za-z0-9-]{1,16}$/;

// The CLI's environment (D25): production adds the wallet URL's production rules.
// sandboxEnabled (D35, SANDBOX_ENABLED): whether an operator may be made a sandbox operator
// here; absent, as it is everywhere but production by default, it may.
export type SettingsPolicy = { production?: boolean; sandboxEnabled?: boolean };

// D35: known seeds make outcomes predictable, so a deployment that moves real money (production
// without SANDBOX_ENABLED=true) has no sandbox operators; the service checks again at launch
function checkSandbox(settings: OperatorSettings, { sandboxEnabled = true }: SettingsPolicy): void {
  if (settings.sandbox === true && !sandboxEnabled) {
    throw new OperatorInputError('a sandbox operator needs a deployment with SANDBOX_ENABLED=true (refused by default with NODE_ENV=production, D35)');
  }
}

function checkSettings(settings: OperatorSettings): void {
  if (settings.walletUrl !== undefined) {
    const problem = walletUrlFormatProblem(settings.walletUrl);
    if (problem) throw new OperatorInputError(problem);
  }
  for (const currency of settings.currencies ?? []) {
    if (!CURRENCY.test(currency)) throw new OperatorInputError(`invalid currency code: ${currency}`);
  }
  for (const cidr of settings.ipAllowList ?? []) {
    if (!isCidrOrIp(cidr)) throw new OperatorInputError(`invalid IP or CIDR in allow-list: ${cidr}`);
  }
  for (const jurisdiction of settings.jurisdictionsBlocked ?? []) {
    if (!JURISDICTION.test(jurisdiction)) throw new OperatorInputError(`invalid jurisdiction code: ${jurisdiction}`);
  }
  for (const origin of settings.frameAncestors ?? []) {
    const problem = frameAncestorProblem(origin);
    if (problem) throw new OperatorInputError(problem);
  }
  const window = settings.signatureWindowSeconds;
  if (window !== undefined && (!Number.isInteger(window) || window < 1 || window > 300)) {
    throw new OperatorInputError('signature window must be 1 to 300 seconds');
  }
}

// D25: the wallet URL and the flag as they will be stored, checked together.
async function checkWalletUrlInProduction(walletUrl: string, privateAllowed: boolean): Promise<void> {
  const problem = await walletUrlProductionProblem(walletUrl, privateAllowed);
  if (problem) throw new OperatorInputError(problem);
}

function isCidrOrIp(value: string): boolean {
  try {
    if (value.includes('/')) ipaddr.parseCIDR(value);
    else ipaddr.parse(value);
    return true;
  } catch {
    return false;
  }
}

export type OnboardedOperator = {
  operatorId: string;
  apiKeyId: string;
  apiSecret: string;
  walletKeyId: string;
  walletSignatureSecret: string;
};

// D11: prints the secrets once; only their ciphertext is stored.
export async function createOperator(
  db: Db,
  masterKey: Buffer,
  id: string,
  settings: OperatorSettings & { walletUrl: string },
  policy: SettingsPolicy = {},
  now = new Date(),
): Promise<OnboardedOperator> {
  const { production = false } = policy;
  if (!OPERATOR_ID.test(id)) throw new OperatorInputError('operator id must be 1-64 of A-Z a-z 0-9 _ . -');
  checkSettings(settings);
  checkSandbox(settings, policy);
  if (production) await checkWalletUrlInProduction(settings.walletUrl, settings.walletUrlPrivateAllowed ?? false);
  const api = sealedCredential(masterKey, 'API', now);
  const wallet = sealedCredential(masterKey, 'WALLET', now);
  try {
    await db.operator.create({
      data: {
        id,
        walletUrl: settings.walletUrl.replace(/\/+$/, ''),
        walletUrlPrivateAllowed: settings.walletUrlPrivateAllowed ?? false,
        currencies: settings.currencies ?? [],
        ipAllowList: settings.ipAllowList ?? [],
        jurisdictionsBlocked: settings.jurisdictionsBlocked ?? [],
        frameAncestors: settings.frameAncestors ?? [],
        signatureWindowSeconds: settings.signatureWindowSeconds,
        suspended: settings.suspended ?? false,
        sandbox: settings.sandbox ?? false,
        rgMaxima: mergeRgMaxima({}, settings.rgMax),
        credentials: { create: [api.data, wallet.data] },
      },
    });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      throw new OperatorInputError(`operator ${id} already exists`);
    }
    throw err;
  }
  return {
    operatorId: id,
    apiKeyId: api.minted.kid,
    apiSecret: api.minted.secret,
    walletKeyId: wallet.minted.kid,
    walletSignatureSecret: wallet.minted.secret,
  };
}

export async function updateOperator(db: Db, id: string, settings: OperatorSettings, policy: SettingsPolicy = {}) {
  const { production = false } = policy;
  checkSettings(settings);
  checkSandbox(settings, policy);
  const existing = await db.operator.findUnique({ where: { id } });
  if (!existing) throw new CredentialError(`operator ${id} does not exist`);
  if (production && (settings.walletUrl !== undefined || settings.walletUrlPrivateAllowed !== undefined)) {
    await checkWalletUrlInProduction(settings.walletUrl ?? existing.walletUrl, settings.walletUrlPrivateAllowed ?? existing.walletUrlPrivateAllowed);
  }
  const updated = await db.operator.update({
    where: { id },
    data: {
      walletUrl: settings.walletUrl?.replace(/\/+$/, ''),
      walletUrlPrivateAllowed: settings.walletUrlPrivateAllowed,
      currencies: settings.currencies,
      ipAllowList: settings.ipAllowList,
      jurisdictionsBlocked: settings.jurisdictionsBlocked,
      frameAncestors: settings.frameAncestors,
      signatureWindowSeconds: settings.signatureWindowSeconds,
      suspended: settings.suspended,
      sandbox: settings.sandbox,
      rgMaxima: settings.rgMax ? mergeRgMaxima(existing.rgMaxima, settings.rgMax) : undefined,
    },
  });
  return describeOperator(updated);
}

function mergeRgMaxima(current: unknown, specs: OperatorSettings['rgMax']): StoredRgMaxima {
  const merged: StoredRgMaxima = { ...((current as StoredRgMaxima | null) ?? {}) };
  for (const spec of specs ?? []) merged[spec.jurisdiction] = spec.maxima;
  return merged;
}

// the origins that may frame the operator's pages besides the service's own (D16): none
// for an unknown operator
export async function operatorFrameAncestors(db: Db, operatorId: string): Promise<string[]> {
  const operator = await db.operator.findUnique({ where: { id: operatorId }, select: { frameAncestors: true } });
  return operator?.frameAncestors ?? [];
}

export function describeOperator(operator: {
  id: string;
  walletUrl: string;
  walletUrlPrivateAllowed: boolean;
  currencies: string[];
  ipAllowList: string[];
  jurisdictionsBlocked: string[];
  frameAncestors: string[];
  rgMaxima: unknown;
  signatureWindowSeconds: number;
  suspended: boolean;
  sandbox: boolean;
}) {
  return {
    operatorId: operator.id,
    walletUrl: operator.walletUrl,
    walletUrlPrivateAllowed: operator.walletUrlPrivateAllowed,
    currencies: operator.currencies,
    ipAllowList: operator.ipAllowList,
    jurisdictionsBlocked: operator.jurisdictionsBlocked,
    frameAncestors: operator.frameAncestors,
    rgMaxima: operator.rgMaxima,
    signatureWindowSeconds: operator.signatureWindowSeconds,
    suspended: operator.suspended,
    sandbox: operator.sandbox,
  };
}

// `rgs operator show` (D11): the settings as describeOperator lays them out
export async function showOperator(db: Db, id: string) {
  const found = await db.operator.findUnique({ where: { id } });
  if (!found) throw new Error(`operator ${id} does not exist`);
  return describeOperator(found);
}

// contract 5.4: an empty allow-list means only the signature is checked.
export function ipAllowed(allowList: string[], callerIp: string): boolean {
  if (allowList.length === 0) return true;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.process(callerIp);
  } catch {
    return false;
  }
  return allowList.some((entry) => {
    try {
      const [range, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.process(entry), -1];
      const normalized = range.kind() === 'ipv6' && (range as ipaddr.IPv6).isIPv4MappedAddress()
        ? (range as ipaddr.IPv6).toIPv4Address()
        : range;
      if (normalized.kind() !== address.kind()) return false;
      const prefix = bits === -1 ? (address.kind() === 'ipv4' ? 32 : 128) : bits;
      return address.match(normalized, prefix);
    } catch {
      return false;
    }
  });
}
