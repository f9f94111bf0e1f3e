// @ts-check
// The time a player has played, as the game page shows it under a jurisdiction profile that
// asks for it (jurisdiction.js): a clock, the same in every language.

// ms as the clock of a session: "4:05", "1:02:03"
/** @param {number} ms */
export function elapsedText(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
