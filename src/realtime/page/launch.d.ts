// Types of launch.js for the unit tests (the page itself is plain JavaScript, served as is).

export function displayClaims(token: string | null): { lang: string | null; currency: string | null };
export function safeReturnUrl(text: unknown): string | null;
export function tabStorage(): Storage | null;
export function rememberLaunch(storage: Pick<Storage, 'setItem'> | null, launch: { lang: string | null; returnUrl: unknown }): void;
export function rememberedLaunch(storage: Pick<Storage, 'getItem'> | null): { lang: string | null; returnUrl: string | null } | null;
