// @ts-check
// The session's jurisdiction profile on the game page (connected.jurisdiction), for every
// game: the time the player has played and their net position, shown all the time when the
// profile asks for them, and the reality check. The service holds the truth: the elapsed time
// counts up here from its elapsedMs, the net position is only ever its netPositionMicro
// (asked for again with session_position after each of the player's rounds), and the check
// falls due on its realityCheckInMs. While a check is due the service refuses every bet
// (reality_check_due), so the page holds its bet buttons and shows the check, a modal the
// player leaves only by choosing: continue (reality_check_ack) or leave for the casino.

import { t } from './i18n.js';
import { byId } from './panels.js';
import { elapsedText } from './play-time.js';

/** @typedef {import('../../shared/domain/player-channel.js').JurisdictionView} JurisdictionView */
/** @typedef {import('../../shared/domain/player-channel.js').PlayerPosition} PlayerPosition */
/** @typedef {import('../../shared/domain/player-channel.js').PositionAck} PositionAck */
/** @typedef {import('./money.js').MoneyFormat} MoneyFormat */

/**
 * What the page's shell gives this part of the page
 * @typedef {object} Shell
 * @property {() => MoneyFormat} money the session's money.js formatter
 * @property {(event: 'session_position' | 'reality_check_ack', answer: (ack: PositionAck | null) => void) => void} ask
 *   sends the message; null: no socket, or no answer in time
 * @property {() => string | null} returnUrl the operator's returnUrl, checked (null: none)
 * @property {() => boolean} holdCheck a bet of the player's still needs them (a crash bet to cash
 *   out): the check waits for its end rather than covering its controls
 * @property {() => void} changed whether bets may be placed changed
 */

// the elements a modal leaves out of reach while it is open
const OUTSIDE = ['header.topbar', '#play-facts', 'main.layout'];
const FOCUSABLE = 'button:not([disabled]), a[href]:not([hidden]), [tabindex]:not([tabindex="-1"])';

/** @param {Shell} shell */
export function jurisdictionPart(shell) {
  const el = {
    facts: byId('play-facts'),
    elapsedFact: byId('elapsed-fact'),
    elapsed: byId('elapsed'),
    netFact: byId('net-fact'),
    net: byId('net-position'),
    backdrop: byId('reality-check'),
    dialog: byId('reality-check-dialog'),
    checkElapsed: byId('reality-check-elapsed'),
    checkNet: byId('reality-check-net'),
    checkMessage: byId('reality-check-message'),
    continue: byId('reality-check-continue', HTMLButtonElement),
    leave: byId('reality-check-leave', HTMLAnchorElement),
  };

  /** @type {JurisdictionView['rules'] | null} */
  let rules = null;
  // on this page's clock: when the player's play began, and when the check falls due (null: none)
  let startedAt = 0;
  /** @type {number | null} */
  let dueAt = null;
  let netMicro = '0';
  let ended = false;
  // the check: asked to show (waiting for fresh figures, or for holdCheck), shown, answering
  let wanted = false;
  let open = false;
  let answering = false;
  /** @type {Element | null} */
  let focusBefore = null;
  // session_position: one request at a time, and once more after it when asked meanwhile
  let asking = false;
  let askAgain = false;

  const due = () => dueAt !== null && Date.now() >= dueAt;

  // where the player stands, as the service counted it at the time of its answer
  /** @param {PlayerPosition} position */
  function take(position) {
    const now = Date.now();
    startedAt = now - position.elapsedMs;
    dueAt = position.realityCheckInMs === null ? null : now + position.realityCheckInMs;
    netMicro = position.netPositionMicro;
  }

  // connected (again, after a reconnect): the profile and where the player stands
  /** @param {JurisdictionView | undefined} view */
  function configure(view) {
    if (!view) return;
    rules = view.rules;
    take(view);
    // acknowledged elsewhere meanwhile (another tab of the session)
    if (open && !due()) close();
    render();
    tick();
  }

  // session_position after a round of the player's ended (a result, a refusal, a cash-out, a
  // settlement): the net position moves, and the check may have fallen due
  function refresh() {
    if (!rules || ended) return;
    if (asking) {
      askAgain = true;
      return;
    }
    asking = true;
    shell.ask('session_position', (ack) => {
      asking = false;
      if (ack?.ok) {
        take(ack);
        render();
      }
      // the check is shown when the service's figures say it is due (a refusal said so, or
      // this page's clock, which may run ahead of the service's)
      if (wanted && !open) {
        if (due()) show();
        else {
          wanted = false;
          shell.changed();
        }
      } else tick();
      if (askAgain) {
        askAgain = false;
        refresh();
      }
    });
  }

  // a bet refused, which ends its round: reality_check_due says the check is due whatever
  // this page's clock says
  /** @param {string} reason */
  function onRefused(reason) {
    if (!rules) return;
    if (reason === 'reality_check_due') {
      dueAt = Math.min(dueAt ?? Date.now(), Date.now());
      ask();
    } else refresh();
    shell.changed();
  }

  // the check is due: fresh figures first, then the dialog
  function ask() {
    if (wanted || open || ended) return;
    wanted = true;
    shell.changed();
    refresh();
  }

  function show() {
    if (open || ended) return;
    if (shell.holdCheck()) return;
    wanted = false;
    open = true;
    focusBefore = document.activeElement;
    for (const selector of OUTSIDE) document.querySelector(selector)?.setAttribute('inert', '');
    el.checkMessage.textContent = '';
    el.checkMessage.dataset.kind = '';
    el.continue.disabled = false;
    const returnUrl = shell.returnUrl();
    el.leave.hidden = returnUrl === null;
    if (returnUrl) el.leave.href = returnUrl;
    else el.leave.removeAttribute('href');
    el.backdrop.hidden = false;
    document.body.dataset.modal = 'open';
    render();
    // the dialog itself takes the focus: a screen reader reads its name and figures, and no
    // choice is made by a stray Enter
    el.dialog.focus();
    shell.changed();
  }

  function close() {
    open = false;
    wanted = false;
    el.backdrop.hidden = true;
    delete document.body.dataset.modal;
    for (const selector of OUTSIDE) document.querySelector(selector)?.removeAttribute('inert');
    if (focusBefore instanceof HTMLElement && focusBefore.isConnected && !focusBefore.closest('[inert]')) focusBefore.focus();
    focusBefore = null;
    shell.changed();
  }

  function acknowledge() {
    if (!open || answering) return;
    answering = true;
    el.continue.disabled = true;
    el.checkMessage.textContent = '';
    el.checkMessage.dataset.kind = '';
    shell.ask('reality_check_ack', (ack) => {
      answering = false;
      el.continue.disabled = false;
      if (!ack?.ok) {
        el.checkMessage.textContent = t('reality_check_failed');
        el.checkMessage.dataset.kind = 'error';
        return;
      }
      take(ack);
      close();
      render();
    });
  }

  // the second hand, and the check when its time comes
  function tick() {
    if (!rules || ended) return;
    if (rules.showElapsedTime || open) {
      const text = elapsedText(Date.now() - startedAt);
      if (rules.showElapsedTime && el.elapsed.textContent !== text) el.elapsed.textContent = text;
      if (open && el.checkElapsed.textContent !== text) el.checkElapsed.textContent = text;
    }
    if (due() && !open) {
      if (!wanted) ask();
      // a held check (a crash bet to cash out) is shown once nothing holds it any more
      else if (!asking) show();
    }
  }

  // the words and amounts, in the session's language and currency
  function render() {
    el.facts.hidden = !rules || (!rules.showElapsedTime && !rules.showNetPosition);
    el.elapsedFact.hidden = !rules?.showElapsedTime;
    el.netFact.hidden = !rules?.showNetPosition;
    const net = shell.money().signed(netMicro);
    if (rules?.showNetPosition) el.net.textContent = net;
    el.checkNet.textContent = net;
    el.checkElapsed.textContent = elapsedText(Date.now() - startedAt);
    tick();
  }

  // the session ended: the clock stops, and a check would offer a game that cannot go on
  function end() {
    ended = true;
    if (open) close();
    wanted = false;
  }

  el.continue.addEventListener('click', acknowledge);
  // a modal left only by choosing: Escape closes nothing, and Tab goes round its choices
  el.dialog.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      return;
    }
    if (event.key !== 'Tab') return;
    const choices = /** @type {HTMLElement[]} */ ([...el.dialog.querySelectorAll(FOCUSABLE)]).filter((node) => !node.hidden);
    if (choices.length === 0) return event.preventDefault();
    const first = /** @type {HTMLElement} */ (choices[0]);
    const last = /** @type {HTMLElement} */ (choices[choices.length - 1]);
    if (event.shiftKey && (document.activeElement === first || document.activeElement === el.dialog)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  });
  // whatever else takes the focus while the check is open gives it back
  document.addEventListener('focusin', (event) => {
    if (open && event.target instanceof Node && !el.dialog.contains(event.target)) el.dialog.focus();
  });
  setInterval(tick, 250);

  return {
    configure,
    refresh,
    onRefused,
    render,
    end,
    // bets wait while a check is due or shown (the service would refuse them)
    holdsBets: () => open || wanted || due(),
    isOpen: () => open,
    // the refusal's bound, in the session's currency, when the profile names one
    maxStakeMicro: () => (rules?.maxStakeMicro ? BigInt(rules.maxStakeMicro) : null),
    minRoundMs: () => rules?.minRoundMs ?? 0,
  };
}
