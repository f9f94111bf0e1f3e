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
