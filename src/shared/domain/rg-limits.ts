// Responsible-gambling limits requested at launch against the operator's per-jurisdiction
// maxima (DECISIONS D7): every listed field is required and may not exceed its maximum.
// Pure; amounts are bigint micro-units (D18).

export type RgLimits = { dailyLossMicro?: bigint; dailyWagerMicro?: bigint; sessionTimeSeconds?: number };
export type RgMaxima = { dailyLossMicro?: bigint; dailyWagerMicro?: bigint; sessionTimeSeconds?: number };
export const RG_FIELDS = ['dailyLossMicro', 'dailyWagerMicro', 'sessionTimeSeconds'] as const;
export type RgField = (typeof RG_FIELDS)[number];

// Returns the fields that are missing or too loose; empty means the limits are acceptable.
export function looseRgFields(limits: RgLimits, maxima: RgMaxima | undefined): RgField[] {
  if (!maxima) return [];
  return RG_FIELDS.filter((field) => {
    const max = maxima[field];
    if (max === undefined) return false;
    const requested = limits[field];
    return requested === undefined || BigInt(requested) > BigInt(max);
  });
}

// Stored as JSON: { "<JUR>": { "<field>": "<integer as string>" } } so bigints survive.
export type StoredRgMaxima = Record<string, Partial<Record<RgField, string>>>;

export function maximaFor(stored: unknown, jurisdiction: string): RgMaxima | undefined {
  if (!stored || typeof stored !== 'object') return undefined;
  const entry = (stored as StoredRgMaxima)[jurisdiction];
  if (!entry) return undefined;
  return {
    dailyLossMicro: entry.dailyLossMicro === undefined ? undefined : BigInt(entry.dailyLossMicro),
    dailyWagerMicro: entry.dailyWagerMicro === undefined ? undefined : BigInt(entry.dailyWagerMicro),
    sessionTimeSeconds: entry.sessionTimeSeconds === undefined ? undefined : Number(entry.sessionTimeSeconds),
  };
}

// CLI form (D7): "JUR:sessionTimeSeconds=N,dailyLossMicro=N,dailyWagerMicro=N".
export function parseRgMaxSpec(spec: string): { jurisdiction: string; maxima: Partial<Record<RgField, string>> } {
  const match = /^([A-Za-z0-9-]{1,16}):(.+)$/.exec(spec);
  if (!match) throw new Error(`--rg-max must look like JUR:sessionTimeSeconds=N,dailyLossMicro=N (got "${spec}")`);
  const maxima: Partial<Record<RgField, string>> = {};
  for (const pair of match[2]!.split(',')) {
    const [field, value] = pair.split('=');
    if (!RG_FIELDS.includes(field as RgField)) throw new Error(`--rg-max: unknown field "${field}" (known: ${RG_FIELDS.join(', ')})`);
    if (!value || !/^[0-9]{1,20}$/.test(value)) throw new Error(`--rg-max: ${field} needs a non-negative integer`);
    maxima[field as RgField] = value;
  }
  return { jurisdiction: match[1]!, maxima };
}
