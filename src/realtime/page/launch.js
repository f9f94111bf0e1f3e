// @ts-check
// What the page takes from its launch before and beside the channel (contract 2.2, 5.6).

// The token's lang and currency, read without verifying it, before the channel answers: the
// page speaks the player's language from its first word, a refused token included. Only
// the display uses them; the service verifies the token at the handshake (D4) and its
// `connected` message is what the page then follows.
/** @param {string | null} token */
export function displayClaims(token) {
  try {
    const payload = String(token).split('.')[1] ?? '';
    const binary = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0))));
    return {
      lang: typeof claims?.lang === 'string' ? claims.lang : null,
      currency: typeof claims?.currency === 'string' ? claims.currency : null,
    };
  } catch {
    return { lang: null, currency: null };
  }
}

// The operator's returnUrl (contract 2.2: the game sends the player there on exit) as a
// link target: an absolute http(s) URL (D9), else null and no exit is offered. The service
// validated it at launch; the page does not rely on that for what it puts in an href.
/** @param {unknown} text @returns {string | null} */
export function safeReturnUrl(text) {
  if (typeof text !== 'string' || text === '') return null;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

// What a reload of the page needs to explain itself. The token is read from the launch URL
// and removed from it at once, and held in memory only (contract 5.6): a reload has none and
// cannot reconnect. So that the page can then say so in the player's language and offer the
// way back to the casino, the first load keeps the session's language and the operator's
// returnUrl (neither is a secret; never the token) in the tab's sessionStorage, which lives
// as long as the tab and is seen by no other site.
const LAUNCH_KEY = 'rgs-play-launch';

// the tab's sessionStorage, or null where the browser refuses it (storage blocked in a frame)
export function tabStorage() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/**
 * @param {Pick<Storage, 'setItem'> | null} storage
 * @param {{ lang: string | null, returnUrl: unknown }} launch
 */
export function rememberLaunch(storage, launch) {
  try {
    storage?.setItem(LAUNCH_KEY, JSON.stringify({ lang: launch.lang, returnUrl: safeReturnUrl(launch.returnUrl) }));
  } catch {
    // a full or refused storage: a reload then explains itself in English, without a link
  }
}

// The launch a page of this tab remembered, its returnUrl checked again before it becomes a
// link (safeReturnUrl); null when none did.
/**
 * @param {Pick<Storage, 'getItem'> | null} storage
 * @returns {{ lang: string | null, returnUrl: string | null } | null}
 */
export function rememberedLaunch(storage) {
  try {
    const launch = JSON.parse(storage?.getItem(LAUNCH_KEY) ?? 'null');
    if (typeof launch !== 'object' || launch === null) return null;
    return { lang: typeof launch.lang === 'string' ? launch.lang : null, returnUrl: safeReturnUrl(launch.returnUrl) };
  } catch {
    return null;
  }
}
