// Types of launch.js for the unit tests (the page itself is plain JavaScript, served as is).

export function displayClaims(token: string | null): { lang: string | null; currency: string | null };
export function safeReturnUrl(text: unknown): string | null;
