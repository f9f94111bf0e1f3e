// Types of i18n.js for the unit tests (the page itself is plain JavaScript, served as is).

export const LANGUAGES: readonly string[];
export function resolveLanguage(tag: string | null | undefined): { language: string; locale: string };
export function language(): string;
export function setLanguage(tag: string | null | undefined): Promise<string>;
export function gameTitle(): string;
export function t(key: string, vars?: Record<string, unknown>): string;
export function connectionText(kind: string | undefined): string;
export function phaseText(phase: string | null | undefined): string;
export function refusalText(reason: string): string;
export function reasonText(reason: string, vars?: Record<string, unknown>): string;
export function endText(reason: string): string;
