// Types of crash-curve.js for the unit tests (the page itself is plain JavaScript, served as is).

export const MIN_AUTO_CASH_OUT_CENTS: bigint;
export function curveCents(ms: number): bigint;
export function curveValue(ms: number): number;
export function curveTime(cents: bigint): number;
export function centsOf(text: string | null | undefined): bigint | null;
export function wireMultiplier(cents: bigint): string;
export function multiplierText(cents: bigint, decimal: string): string;
export function multiplierInput(cents: bigint, decimal: string): string;
export function parseMultiplier(text: string, decimal: string): { ok: true; cents: bigint | null } | { ok: false; error: 'format' | 'decimals' };
export function crashPayout(stakeMicro: bigint, cents: bigint, maxPayoutMicro: bigint | null): bigint;
