// @ts-check
// DOM for the round history, the revealed seeds and a round's verification, and the page's
// own elements by id. Everything from the service is set as text, never as markup.

import { centsText } from './fair.js';
import { t } from './i18n.js';
import { balanceText, roundStateText, utcTime } from './rounds.js';

/** @typedef {import('../../shared/domain/player-channel.js').RecalledBalance} RecalledBalance */
/** @typedef {import('./money.js').MoneyFormat} MoneyFormat */
/** @typedef {Awaited<ReturnType<typeof import('./fair.js').deriveRound>>} Derivation */
/** @typedef {Awaited<ReturnType<typeof import('./fair.js').deriveCrash>>} CrashDerivation */

// A round of the session in the game page's history (game.js): what the page saw of it live
// (bet_placed, round_result, round_voided), with what the service recorded of it over that
// (recent_rounds, D33). The optional fields are there once the page has learned them.
/**
 * @typedef {object} HistoryRound
 * @property {string} roundId
 * @property {string} cycleId
 * @property {string | null} seedHash the committed server seed hash the round was played under, as the page was shown it
 * @property {number | null} nonce
 * @property {string | null} side null until the page learns the bet's side
 * @property {string | null} amountMicro
 * @property {boolean} isFree
 * @property {{ side: string, face: number, won: boolean, payoutMicro: string | null } | null} outcome
 * @property {string | null} voided the reason, once the round is voided
 * @property {string} [placedAt]
 * @property {string} [state]
 * @property {boolean | null} [won]
 * @property {string | null} [voidReason]
 * @property {string | null} [rejectReason]
 * @property {RecalledBalance} [balanceBefore]
 * @property {RecalledBalance} [balanceAfter]
 * @property {{ low: bigint, high: bigint }} [weights] the round's weight snapshot (D19)
 * @property {{ serverSeed: string, clientSeed: string }} [seed] its retired seed, as the service shows it (D2, D5)
 * @property {string | null} [autoCashOut] crash: the bet's auto cash-out ("2.00"), null for none (D40)
 * @property {{ crashMultiplier: string | null, cashOutMultiplier: string | null, won: boolean, payoutMicro: string | null } | null} [flight]
 *   crash: the round's result once resolved (D40): the player's crash point (null until round_result
 *   names it), the cash-out granted (null when lost), the payout
 * @property {string} [commissionMicro] crash: the edge its crash point was derived with, as its proof gives it (D40)
 * @property {boolean} [featureBuy] Gem Vault: whether the play bought the feature (its amountMicro is then the feature's cost, D41)
 * @property {{ won: boolean, payoutMicro: string | null } | null} [play] Gem Vault: the play's result once known (D41)
 */

// A game's own cells of a history row, beside the shared ones: what was bet (the stake is
// added after it) and the outcome (the round's state is added after it)
/** @typedef {(round: HistoryRound) => { bet: Node[], result: Node[] }} HistoryCells */

// a seed the page saw retired (D5 rotation, D28 session end), by its hash: its rounds are
// nonces 0 to lastNonce (null: none was played)
/** @typedef {{ serverSeed: string, clientSeed: string | null, lastNonce: number | null }} RevealedSeed */

// One of the page's own elements (index.html, recall.html), of the class `kind` (HTMLElement
// unless given). The served markup always has it; markup without it stops the page here,
// with the id, rather than at the first use of a null.
/**
 * @overload
 * @param {string} id
 * @returns {HTMLElement}
 */
/**
 * @template {HTMLElement} E
 * @overload
 * @param {string} id
 * @param {new () => E} kind
 * @returns {E}
 */
/**
 * @param {string} id
 * @param {new () => HTMLElement} [kind]
 * @returns {HTMLElement}
 */
export function byId(id, kind = HTMLElement) {
  const element = document.getElementById(id);
  if (element instanceof kind) return element;
  throw new Error(element ? `the page's #${id} is not an ${kind.name}` : `the page has no element #${id}`);
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string | null} [text]
 * @param {string} [className]
 * @returns {HTMLElementTagNameMap[K]}
 */
function node(tag, text, className) {
  const element = document.createElement(tag);
  if (text !== undefined) element.textContent = text;
  if (className) element.className = className;
  return element;
}

// newest first: nonce, time (UTC), side bet and stake, result face/side with the round's
// state (settled won or lost, voided with its reason, in play), payout, the balance before
// and after as the wallet answered them (D33), and a verify button once the round's seed is
// revealed (D5); `money` the session's money.js formatter; `cells` another game's own cells
// of the bet and the outcome (crash, D40), dice's without it
/**
 * @param {HTMLElement} tbody
 * @param {HistoryRound[]} rounds
 * @param {{ revealed: Map<string, RevealedSeed>, sideName: (side: string | null) => string, money: MoneyFormat, cells?: HistoryCells }} shown
 */
export function renderHistory(tbody, rounds, { revealed, sideName, money, cells }) {
  tbody.replaceChildren(
    ...rounds.map((round) => {
      const row = document.createElement('tr');
      row.dataset.roundId = round.roundId;
      // the outcome as far as it is known: dice's die, crash's resolved flight, or Gem Vault's play
      const known = round.outcome ?? round.flight ?? round.play ?? null;
      row.dataset.outcome = round.voided ? 'voided' : known ? (known.won ? 'won' : 'lost') : 'pending';
      const stake = round.isFree ? t('free_bet') : round.amountMicro === null ? '—' : money.number(round.amountMicro);
      const payout = round.voided || !known || known.payoutMicro === null ? '—' : known.won ? `+${money.number(known.payoutMicro)}` : money.number(0n);
      const time = node('td', round.placedAt ? utcTime(round.placedAt).slice(11, 19) : '—', 'time');
      if (round.placedAt) time.title = utcTime(round.placedAt);
      const own = cells ? cells(round) : null;
      const bet = node('td', undefined, 'bet-cell');
      bet.append(...(own ? own.bet : [sideTag(round.side, sideName)]), node('span', stake, round.isFree ? 'stake-amount free' : 'stake-amount'));
      const result = node('td', undefined, 'result-cell');
      if (own) result.append(...own.result);
      else if (round.outcome && !round.voided) result.append(node('span', String(round.outcome.face), 'face'), ' ', sideTag(round.outcome.side, sideName));
      result.append(node('span', roundStateText(stateOf(round)), 'state'));
      const balance = node('td', undefined, 'num balance-cell');
      balance.append(
        node('span', balanceText(round.balanceBefore, money.number), 'before'),
        node('span', `→ ${balanceText(round.balanceAfter, money.number)}`, 'after'),
      );
      const action = node('td', undefined, 'action');
      // a die to recompute, or a crash point with the edge it was derived with (D40)
      const checkable = round.outcome || (round.flight?.crashMultiplier && round.commissionMicro !== undefined);
      if (checkable && !round.voided && (round.seed || (round.seedHash !== null && revealed.has(round.seedHash)))) {
        const button = node('button', undefined, 'verify');
        button.type = 'button';
        button.dataset.roundId = round.roundId;
        button.setAttribute('aria-label', t('verify_label', { nonce: round.nonce }));
        // where the table is narrow (game.css), the icon alone; the label names it
        button.append(verifyIcon(), node('span', t('verify'), 'verify-text'));
        action.append(button);
      }
      row.append(node('td', String(round.nonce ?? '—')), time, bet, result, node('td', payout, 'num payout'), balance, action);
      return row;
    }),
  );
}

// the round's state as the service recorded it, or as the page saw it live
/** @param {HistoryRound} round */
const stateOf = (round) =>
  round.voided
    ? { state: 'VOIDED', voidReason: round.voidReason ?? round.voided, rejectReason: round.rejectReason }
    : round.state
      ? round
      : { state: 'BETTING_OPEN' };

// a shield with a check mark, drawn with the text's colour
const SVG = 'http://www.w3.org/2000/svg';
function verifyIcon() {
  const icon = document.createElementNS(SVG, 'svg');
  for (const [name, value] of [['viewBox', '0 0 24 24'], ['width', '16'], ['height', '16'], ['aria-hidden', 'true'], ['focusable', 'false'], ['class', 'verify-icon']]) icon.setAttribute(name, value);
  const path = document.createElementNS(SVG, 'path');
  for (const [name, value] of [
    ['d', 'M12 3l7 3v5c0 4.5-3 8.3-7 10-4-1.7-7-5.5-7-10V6l7-3zM8.5 12l2.5 2.5 4.5-5'],
    ['fill', 'none'],
    ['stroke', 'currentColor'],
    ['stroke-width', '2'],
    ['stroke-linecap', 'round'],
    ['stroke-linejoin', 'round'],
  ]) path.setAttribute(name, value);
  icon.append(path);
  return icon;
}

/**
 * @param {string | null} side
 * @param {(side: string | null) => string} sideName
 */
const sideTag = (side, sideName) => node('span', sideName(side), `tag ${side === 'LOW' ? 'low' : 'high'}`);

/**
 * @param {HTMLElement} list
 * @param {Map<string, RevealedSeed>} revealed
 */
export function renderRevealed(list, revealed) {
  list.replaceChildren(
    ...[...revealed].map(([serverSeedHash, seed]) => {
      const item = node('li');
      const fields = node('dl');
      const nonces = seed.lastNonce === null ? t('revealed_nonces_none') : t('revealed_nonces_range', { first: 0, last: seed.lastNonce });
      for (const [label, value] of [
        [t('revealed_seed'), seed.serverSeed],
        [t('revealed_hash'), serverSeedHash],
        [t('revealed_client'), seed.clientSeed],
        [t('revealed_nonces'), nonces],
      ]) {
        const dd = node('dd');
        dd.append(node('code', value));
        fields.append(node('dt', label), dd);
      }
      item.append(fields);
      return item;
    }),
  );
}

// the D2 steps, each with its numbers, and the verdict MATCH or MISMATCH against the result
// the page was shown (round_result). weightsHint: whether to say where step 5's weights came
// from (the game page: what the player channel sent; the recall page shows the recorded ones)
/**
 * @param {HTMLElement} container
 * @param {{ nonce: number | null, seedHash: string | null, outcome: { side: string, face: number } }} round
 * @param {{ serverSeed: string, clientSeed: string | null }} seed
 * @param {Derivation | null} derived null when the page could not derive it (no Web Crypto)
 */
export function renderVerification(container, round, seed, derived, weightsHint = true) {
  const heading = node('h3', t('verify_heading', { nonce: round.nonce }));
  if (!derived) {
    container.replaceChildren(heading, node('p', t('verify_no_crypto'), 'verdict'));
    return;
  }
  const shown = round.outcome;
  const base = derived.side === 'LOW' ? 1 : 4;
  const steps = [
    t('verify_inputs', { serverSeed: seed.serverSeed, clientSeed: seed.clientSeed, nonce: round.nonce }),
    `${t('verify_hash', { hash: derived.seedHash })} ${derived.hashMatches ? t('verify_hash_ok') : t('verify_hash_bad', { committed: round.seedHash })}`,
    t('verify_hmac', { message: derived.message, hmac: derived.hmacHex }),
    t('verify_ab', { a: derived.a, b: derived.b }),
    t('verify_side', { left: derived.left, op: derived.left < derived.right ? '<' : '≥', right: derived.right, side: derived.side }),
    t('verify_face', { base, index: derived.faceIndex, face: derived.face }),
    t('verify_shown', { face: shown.face, side: shown.side }),
  ];
  const list = node('ol');
  list.append(...steps.map((step) => node('li', step)));
  const matches = derived.hashMatches && derived.side === shown.side && derived.face === shown.face;
  const verdict = node('p', matches ? t('verify_match') : t('verify_mismatch'), 'verdict');
  verdict.dataset.match = String(matches);
  container.replaceChildren(heading, list, ...(weightsHint ? [node('p', t('verify_weights'), 'hint')] : []), verdict);
}

// A crash round's check (D40): the steps from the seeds to the crash point, each with its
// numbers, and the verdict MATCH or MISMATCH against the crash point the page was shown;
// `multiplier` writes a wire multiplier ("2.37") the page's way, without its sign
/**
 * @param {HTMLElement} container
 * @param {{ nonce: number, seedHash: string | null, crashMultiplier: string, commissionMicro: string }} round
 * @param {{ serverSeed: string, clientSeed: string }} seed
 * @param {CrashDerivation | null} derived null when the page could not derive it (no Web Crypto)
 * @param {(text: string) => string} multiplier
 */
export function renderCrashVerification(container, round, seed, derived, multiplier) {
  const heading = node('h3', t('verify_heading', { nonce: round.nonce }));
  if (!derived) {
    container.replaceChildren(heading, node('p', t('verify_no_crypto'), 'verdict'));
    return;
  }
  const recomputed = centsText(derived.crashCents);
  const steps = [
    t('verify_inputs', { serverSeed: seed.serverSeed, clientSeed: seed.clientSeed, nonce: round.nonce }),
    `${t('verify_hash', { hash: derived.seedHash })} ${derived.hashMatches ? t('verify_hash_ok') : t('verify_hash_bad', { committed: round.seedHash })}`,
    t('verify_hmac', { message: derived.message, hmac: derived.hmacHex }),
    t('verify_crash_x', { x: String(derived.x) }),
    t('verify_crash_point', { edge: round.commissionMicro, crash: multiplier(recomputed) }),
    t('verify_crash_shown', { crash: multiplier(round.crashMultiplier) }),
  ];
  const list = node('ol');
  list.append(...steps.map((step) => node('li', step)));
  const matches = derived.hashMatches && recomputed === round.crashMultiplier;
  const verdict = node('p', matches ? t('verify_crash_match') : t('verify_crash_mismatch'), 'verdict');
  verdict.dataset.match = String(matches);
  container.replaceChildren(heading, list, verdict);
}

// Draws the rows into `list` (a <ul>), each with its button; `section` is hidden when there
// is none. A button is enabled when `canPlay` (the bet buttons' rule) and its grant has not
// expired on the page's clock. Rows that have not changed are kept (only their buttons'
// state is set), so that the button a player just pressed keeps its focus.
/**
 * @param {HTMLElement} section
 * @param {HTMLElement} list
 * @param {import('./freebets.js').FreeBetRow[]} rows
 * @param {{ canPlay: boolean, onPlay: (grantId: string) => void }} options
 */
export function renderFreeBets(section, list, rows, { canPlay, onPlay }) {
  section.hidden = rows.length === 0;
  const drawn = JSON.stringify(rows);
  if (list.dataset.rows !== drawn) {
    list.dataset.rows = drawn;
    list.replaceChildren(
      ...rows.map((row) => {
        const item = node('li', undefined, 'free-bet');
        item.dataset.grantId = row.grantId;
        const details = node('div', undefined, 'free-bet-details');
        details.append(
          node('span', row.campaign, 'free-bet-campaign'),
          node('span', row.stake, 'free-bet-stake'),
          // D42: a grant whose rounds buy the feature says so beside its stake
          ...(row.feature ? [node('span', t('free_bet_feature'), 'tag feature free-bet-feature')] : []),
          node('span', row.remaining, 'free-bet-remaining'),
          node('span', row.expires, 'free-bet-expires'),
        );
        const button = node('button', t('free_bet_play'), 'button primary free-bet-play');
        button.type = 'button';
        const label = row.feature ? t('free_bet_play_feature_label', { stake: row.stake, campaign: row.campaign }) : t('free_bet_play_label', { stake: row.stake, campaign: row.campaign });
        button.setAttribute('aria-label', label);
        button.addEventListener('click', () => onPlay(row.grantId));
        item.append(details, button);
        return item;
      }),
    );
  }
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ (list.querySelectorAll('button.free-bet-play'));
  buttons.forEach((button, index) => {
    button.disabled = !canPlay || rows[index]?.expired !== false;
  });
}
