// @ts-check
// The player's game page (contract 1, 4.4; D4, D16): one Socket.IO connection authenticated
// by the session token, the round clock, betting, the round history and the provably fair
// panel. Server messages drive the state; render functions draw it. Words come from
// i18n.js in the session's language, amounts from money.js in its language and currency.
// This file is the shell every game shares, with dice's die and sides; the session's game
// (connected.gameCode, D39) chooses the stage and the bet's controls: crash's are crash.js,
// Gem Vault's gems.js (D41). The session's jurisdiction profile (the time played, the net
// position, the reality check) is jurisdiction.js's, for every game.

import { crashGame } from './crash.js';
import { deriveCrash, deriveRound } from './fair.js';
import { gemsGame } from './gems.js';
import { jurisdictionPart } from './jurisdiction.js';
import { freeBetAnnouncement, freeBetPayload, freeBetRows, freeBetSideCaption, goneFreeBets, readFreeBets } from './freebets.js';
import { connectionText, endText, gameTitle, language, phaseText, reasonText, refusalText, resolveLanguage, setLanguage, t } from './i18n.js';
import { displayClaims, rememberLaunch, rememberedLaunch, safeReturnUrl, tabStorage } from './launch.js';
import { MICRO_PER_UNIT, moneyFormat, netPayout, parseScaled } from './money.js';
import { byId, renderCrashVerification, renderFreeBets, renderHistory, renderRevealed, renderVerification } from './panels.js';

// The player channel's messages, as the service's map declares them (D4): a message name or
// field the map does not have fails the type check (npm run typecheck, tsconfig.json here)
/** @typedef {import('../../shared/domain/player-channel.js').ServerToClientEvents} ServerToClientEvents */
/** @typedef {import('../../shared/domain/player-channel.js').ClientToServerEvents} ClientToServerEvents */
/** @typedef {import('../../shared/domain/player-channel.js').ServerMessages} ServerMessages */
/** @typedef {import('../../shared/domain/player-channel.js').RecalledRound} RecalledRound */
/** @typedef {import('../../shared/domain/player-channel.js').RoundPhase} RoundPhase */
/** @typedef {import('../../shared/domain/player-channel.js').PlaceBet['side']} Side */
/** @template {keyof ServerMessages} E @typedef {Parameters<ServerToClientEvents[E]>[0]} Message */
/** @typedef {import('./panels.js').HistoryRound} HistoryRound */
/** @typedef {import('./panels.js').RevealedSeed} RevealedSeed */
/** @typedef {import('./freebets.js').FreeBet} FreeBet */

// the session's bet limits, stake step (D46) and dice's payout (D18: the multiplier scaled by
// 100000), as BigInt
/** @typedef {{ minBetMicro: bigint, maxBetMicro: bigint, stakeStepMicro: bigint, multiplierScaled: bigint, commissionMicro: bigint }} BetConfig */
// the current round on the service's clock (ms)
/** @typedef {{ cycleId: string, phase: RoundPhase, endsAt: number | null, startedAt: number }} LiveRound */

const el = {
  body: document.body,
  connection: byId('connection'),
  demoBadge: byId('demo-badge'),
  balance: byId('balance'),
  exitLink: byId('exit-link', HTMLAnchorElement),
  phase: byId('phase'),
  countdown: byId('countdown'),
  timerBar: byId('timer-bar'),
  die: byId('die'),
  dieCaption: byId('die-caption'),
  flightCaption: byId('flight-caption'),
  result: byId('result'),
  stakeLabel: byId('stake-label'),
  stake: byId('stake', HTMLInputElement),
  stakeHint: byId('stake-hint'),
  chips: byId('chips'),
  betLow: byId('bet-low', HTMLButtonElement),
  betHigh: byId('bet-high', HTMLButtonElement),
  potential: byId('potential'),
  message: byId('message'),
  freeBets: byId('free-bets'),
  freeBetsList: byId('free-bets-list'),
  freeBetLow: byId('free-bet-low', HTMLInputElement),
  freeBetHigh: byId('free-bet-high', HTMLInputElement),
  freeBetCaption: byId('free-bet-caption'),
  freeBetsLive: byId('free-bets-live'),
  history: byId('history'),
  historyEmpty: byId('history-empty'),
  historyGame: byId('history-game'),
  serverSeedHash: byId('server-seed-hash'),
  currentClientSeed: byId('current-client-seed'),
  nonce: byId('nonce'),
  clientSeed: byId('client-seed', HTMLInputElement),
  rotateSeed: byId('rotate-seed', HTMLButtonElement),
  revealed: byId('revealed'),
  revealedList: byId('revealed-list'),
  verifyOutput: byId('verify-output'),
  ended: byId('ended'),
  endedTitle: byId('ended-title'),
  endedText: byId('ended-text'),
  returnLink: byId('return-link', HTMLAnchorElement),
};

// D4: refusals at the handshake that no retry can cure
const FINAL_REFUSALS = new Set(['invalid_token', 'session_expired', 'session_terminated']);
// D2: a supplied clientSeed is 1 to 64 printable ASCII characters, no ":"
const CLIENT_SEED = /^[\x20-\x39\x3B-\x7E]{1,64}$/;
// the place_bet ack waits for the wallet's verdict (the service allows WALLET_CALL_TIMEOUT_MS + 10 s)
const PLACE_BET_ACK_MS = 20_000;
const ROTATE_ACK_MS = 10_000;
const ROUNDS_ACK_MS = 10_000;
// a cash-out's ack is its decision, durable before it is sent (D40)
const CASH_OUT_ACK_MS = 10_000;
// session_position and reality_check_ack are reads and one small write
const POSITION_ACK_MS = 10_000;
const RETRY_MS = 3_000;
const CHIP_UNITS = [1n, 5n, 10n, 25n];
// the stake a format hint shows, written the player's way ("2.50", "2,50")
const EXAMPLE_STAKE_MICRO = 250000n;

// a game code as the page plays it: crash (D40), Gem Vault (D41), dice for any other
/**
 * @param {string | undefined} code
 * @returns {'dice' | 'crash' | 'gems'}
 */
function gameOf(code) {
  return code === 'crash' || code === 'gems' ? code : 'dice';
}

const state = {
  // the session's game: the page's address names it (the launch page marks the body with
  // it, so the first paint is that game's), and `connected` confirms it (D39)
  game: gameOf(document.body.dataset.game),
  connected: false, // a `connected` message arrived on the live socket
  ended: false,
  money: moneyFormat('en', ''), // the session's money.js formatter: its language and currency
  balanceMicro: /** @type {string | null} */ (null),
  returnUrl: /** @type {string | null} */ (null),
  config: /** @type {BetConfig | null} */ (null), // set by the first `connected`
  round: /** @type {LiveRound | null} */ (null),
  clockOffsetMs: 0, // service clock minus ours, from each message's ts (D4)
  fair: /** @type {{ serverSeedHash: string | null, clientSeed: string | null, nonce: number }} */ ({ serverSeedHash: null, clientSeed: null, nonce: 0 }),
  betCycleId: /** @type {string | null} */ (null), // the cycle of the player's bet: one bet per round (8.2 rule 4)
  placing: false,
  rotating: false,
  lastResult: /** @type {{ cycleId: string, face: number, won: boolean } | null} */ (null),
  rounds: /** @type {HistoryRound[]} */ ([]), // the session's rounds, newest first
  revealed: /** @type {Map<string, RevealedSeed>} */ (new Map()), // by serverSeedHash (D5)
  reportedBets: /** @type {Set<string>} */ (new Set()), // clientBetIds already explained (ack and bet_rejected both arrive)
  freeBets: /** @type {FreeBet[]} */ ([]), // the session's free bets with a round left, as the service last named them
  spentGrantId: /** @type {string | null} */ (null), // the grant of the page's last accepted free bet, until the next list
};

const serverNow = () => Date.now() + state.clockOffsetMs;
/** @param {string | null} side */
const sideName = (side) => (side === 'LOW' ? t('low') : t('high'));
// the bet config, for what runs only after the first `connected` set it (the stake's checks,
// the chips, a refusal's range): a read before then is a bug of the page, said as one
const betConfig = () => {
  if (!state.config) throw new Error('the bet config is read before the session connected');
  return state.config;
};
const rangeVars = () => ({
  min: state.money.amount(betConfig().minBetMicro),
  max: state.money.amount(betConfig().maxBetMicro),
});

// The session's game (D39): the body's data-game shows that game's stage and controls
// (game.css) and the title names it
/** @param {'dice' | 'crash' | 'gems'} game */
function setGame(game) {
  state.game = game;
  el.body.dataset.game = game;
  document.title = gameTitle();
}

// the jurisdiction profile's figures and reality check (jurisdiction.js), on the shell's state
const jurisdiction = jurisdictionPart({
  money: () => state.money,
  ask: (event, answer) => {
    if (!socket) return answer(null);
    /** @type {(err: Error | null, ack: import('../../shared/domain/player-channel.js').PositionAck) => void} */
    const reply = (err, ack) => answer(err ? null : ack);
    if (event === 'reality_check_ack') socket.timeout(POSITION_ACK_MS).emit('reality_check_ack', {}, reply);
    else socket.timeout(POSITION_ACK_MS).emit('session_position', {}, reply);
  },
  returnUrl: () => state.returnUrl,
  // a crash bet not yet resolved needs its cash-out button: the check waits for its result
  holdCheck: () => {
    const round = state.round;
    return state.game === 'crash' && round !== null && state.rounds.some((entry) => entry.cycleId === round.cycleId && entry.amountMicro !== null && !entry.flight && !entry.voided);
  },
  changed: () => renderBetting(),
});

// crash's stage and controls (crash.js), on the shell's state
const crash = crashGame({
  money: () => state.money,
  round: () => state.round,
  playing: () => state.connected && !state.ended,
  canBet: () => canBet(),
  readStake: (options) => readStake(options),
  showMessage: (text, kind) => showMessage(text, kind),
  showResult: (text, outcome) => {
    el.result.textContent = text;
    el.result.dataset.outcome = outcome;
  },
  placeBet: (params) => placeGameBet(params),
  cashOut: (answer) => {
    if (!socket) return answer(null);
    socket.timeout(CASH_OUT_ACK_MS).emit('cash_out', {}, (err, ack) => {
      answer(err ? null : ack);
      // a cash-out ends the player's round: their net position moved
      if (!err && ack.ok) jurisdiction.refresh();
    });
  },
  betOf: (cycleId) => state.rounds.find((round) => round.cycleId === cycleId && (round.amountMicro !== null || round.flight)),
});

// Gem Vault's grid, controls and jackpot meter (gems.js, D41), on the shell's state
const gems = gemsGame({
  money: () => state.money,
  // a reality check due holds the plays, as the service would refuse them
  playing: () => state.connected && !state.ended && !jurisdiction.holdsBets(),
  readStake: (options) => readStake(options),
  showMessage: (text, kind) => showMessage(text, kind),
  showResult: (text, outcome) => {
    el.result.textContent = text;
    el.result.dataset.outcome = outcome;
  },
  play: (payload, answer) => {
    if (!socket) return answer(null);
    // the ack is the debit's verdict, as place_bet's (D41)
    socket.timeout(PLACE_BET_ACK_MS).emit('play', payload, (err, ack) => {
      // D42: the service's next free_bets counts a free play's round as spent
      if (!err && ack.ok && payload.freeBetGrantId !== undefined) state.spentGrantId = payload.freeBetGrantId;
      answer(err ? null : ack);
    });
  },
  reportRejection: (reason, clientBetId) => reportRejection(reason, clientBetId),
  renderFreeBets: () => renderFreeBetPanel(),
});

// ---- connection (D4) -------------------------------------------------------------------

/** @type {import('socket.io-client').Socket<ServerToClientEvents, ClientToServerEvents> | null} */
let socket = null;
// contract 5.6: the token is held in memory only; it leaves the address bar and history now
const token = new URLSearchParams(location.search).get('token');
history.replaceState(null, '', location.pathname);
// where this tab keeps what a reload needs to explain itself (launch.js rememberLaunch)
const storage = tabStorage();

function connect() {
  // the socket of this page, which `socket` holds for the rest of the page (null before now)
  const channel = io({ path: '/socket.io', transports: ['websocket'], auth: { token } });
  socket = channel;
  channel.on('disconnect', (reason) => {
    state.connected = false;
    if (state.ended || reason === 'io client disconnect') return;
    setConnection('reconnecting');
    // the service closed the socket without session_ended: the handshake will say why (D4)
    if (reason === 'io server disconnect') setTimeout(() => channel.connect(), RETRY_MS);
  });
  channel.io.on('reconnect_attempt', () => {
    if (!state.ended) setConnection('reconnecting');
  });
  channel.on('connect_error', (err) => {
    if (FINAL_REFUSALS.has(err.message)) {
      channel.disconnect();
      endGame('refused', err.message);
      return;
    }
    setConnection('reconnecting');
    // Socket.IO retries transport failures itself, not a refusal by the service's middleware
    if (!channel.active) setTimeout(() => channel.connect(), RETRY_MS);
  });

  // A message's handler, behind one listener that first reads the message's ts. Socket.IO's
  // types cannot pair a listener with a name that is a type parameter (E), so the listener is
  // registered under the map's names at large and typed with what every message carries (ts);
  // Socket.IO calls it for `event` only, whose message is the handler's.
  /**
   * @template {keyof ServerMessages} E
   * @param {E} event
   * @param {(msg: Message<E>) => void} handler
   */
  const on = (event, handler) => {
    /** @type {keyof ServerMessages} */
    const name = event;
    channel.on(name, /** @param {{ ts: string }} msg */ (msg) => {
      const ts = Date.parse(msg?.ts);
      if (Number.isFinite(ts)) state.clockOffsetMs = ts - Date.now();
      handler(/** @type {Message<E>} */ (msg));
    });
  };
  // D12: this node is shutting down; the socket closes next and the client reconnects
  on('service_restarting', () => {
    if (!state.ended) setConnection('reconnecting');
  });
  on('connected', (msg) => {
    onConnected(msg);
    refreshRounds();
  });
  on('round_state', (msg) => setRound(msg));
  on('bet_placed', onBetPlaced);
  on('balance_update', (msg) => {
    setBalance(msg.balanceMicro);
    // a debit, win or rollback answered: the history's balances can be read now (D33), and
    // the net position counts the settlement
    refreshRounds();
    jurisdiction.refresh();
  });
  on('bet_rejected', (msg) => {
    if (msg.reason === 'already_bet_this_round' && state.round) state.betCycleId = state.round.cycleId;
    reportRejection(msg.reason, msg.clientBetId);
    if (state.game === 'gems') gems.onRejected(msg.clientBetId);
    renderBetting();
  });
  // the jackpot's pool of the session's operator and currency, and its hits (D41)
  on('jackpot', (msg) => gems.onJackpot(msg));
  // the session's free bets after each change (D42), the service's numbers
  on('free_bets', (msg) => {
    setFreeBets(freeBetsOf(msg), true);
    renderBetting();
  });
  on('round_result', onRoundResult);
  on('round_voided', onRoundVoided);
  on('seed_rotated', (msg) => {
    state.fair = { serverSeedHash: msg.serverSeedHash, clientSeed: msg.clientSeed, nonce: msg.nonce };
    renderFair();
  });
  on('session_ended', (msg) => {
    // D28: the session's seed, retired by its end, so that its last rounds can be verified here
    if (typeof msg.serverSeed === 'string' && msg.serverSeedHash === state.fair.serverSeedHash) {
      state.revealed.set(msg.serverSeedHash, { serverSeed: msg.serverSeed, clientSeed: state.fair.clientSeed, lastNonce: state.fair.nonce > 0 ? state.fair.nonce - 1 : null });
    }
    endGame('ended', msg.reason);
  });
}

/** @param {Message<'connected'>} msg */
function onConnected(msg) {
  const firstTime = state.config === null;
  // the session's own lang and currency; the token's, read before, are normally the same
  state.money = moneyFormat(resolveLanguage(msg.lang).locale, msg.currency);
  if (resolveLanguage(msg.lang).language !== language()) void setLanguage(msg.lang).then(renderTexts);
  state.returnUrl = safeReturnUrl(msg.returnUrl);
  rememberLaunch(storage, { lang: msg.lang, returnUrl: state.returnUrl });
  // contract 2.2: the way back to the operator, offered during play whenever it is set
  el.exitLink.hidden = state.returnUrl === null;
  if (state.returnUrl) el.exitLink.href = state.returnUrl;
  setGame(gameOf(msg.gameCode));
  // the jurisdiction profile's bound on a stake, when it has one, is the stake's maximum too
  const jurisdictionMax = msg.jurisdiction?.rules.maxStakeMicro ? BigInt(msg.jurisdiction.rules.maxStakeMicro) : null;
  const maxBetMicro = BigInt(msg.config.maxBetMicro);
  const minBetMicro = BigInt(msg.config.minBetMicro);
  state.config = {
    minBetMicro,
    maxBetMicro: jurisdictionMax !== null && jurisdictionMax >= minBetMicro && jurisdictionMax < maxBetMicro ? jurisdictionMax : maxBetMicro,
    stakeStepMicro: BigInt(msg.config.stakeStepMicro),
    multiplierScaled: parseScaled(msg.config.payoutMultiplier ?? '') ?? 0n, // D18: scaled by 100000
    commissionMicro: BigInt(msg.config.commissionMicro),
  };
  if (state.game === 'crash') crash.configure(msg.config);
  // the profile's least time between two bets holds Gem Vault's buttons as its own does
  const profileMinRoundMs = msg.jurisdiction?.rules.minRoundMs ?? 0;
  if (state.game === 'gems') gems.configure({ ...msg.config, minRoundMs: Math.max(msg.config.minRoundMs ?? 0, profileMinRoundMs) }, msg.jackpot);
  state.fair = { serverSeedHash: msg.serverSeedHash, clientSeed: msg.clientSeed, nonce: msg.nonce };
  // null: unknown (D24: another connect of the session read it moments ago); a balance
  // this page already knows stays until the next balance_update
  if (msg.balanceMicro !== null || state.balanceMicro === null) state.balanceMicro = msg.balanceMicro;
  el.demoBadge.hidden = msg.mode !== 'demo';
  setFreeBets(freeBetsOf(msg), !firstTime);
  if (firstTime) {
    el.stake.value = state.money.input(defaultStake());
    el.clientSeed.value = msg.clientSeed ?? '';
  }
  state.connected = true;
  jurisdiction.configure(msg.jurisdiction);
  setConnection('live');
  renderChips();
  if (msg.roundState) setRound(msg.roundState);
  renderAll();
}

// the free bets a message names (connected, free_bets, D42), read as the panel shows them:
// those with a round left, an entry that is not a grant left out (readFreeBets)
/** @param {Message<'connected'> | Message<'free_bets'>} msg */
const freeBetsOf = (msg) => readFreeBets(msg.freeBets);

// The service's new list of the session's grants (D42). A grant that leaves it with rounds
// the page did not spend itself (a campaign cancelled, expired, or played out in another tab)
// is said to be no longer available, never dropped in silence; a change of the rounds left is
// told to a screen reader.
/**
 * @param {FreeBet[]} grants
 * @param {boolean} announce false for the session's first list
 */
function setFreeBets(grants, announce) {
  const gone = goneFreeBets(state.freeBets, grants, state.spentGrantId);
  const counts = (/** @type {FreeBet[]} */ list) => JSON.stringify(list.map((grant) => [grant.grantId, grant.remaining]));
  const changed = counts(grants) !== counts(state.freeBets);
  state.freeBets = grants;
  state.spentGrantId = null;
  if (gone.length > 0) showMessage(t('reason_free_bet_unavailable'), 'error');
  if (changed && announce) el.freeBetsLive.textContent = freeBetAnnouncement(freeBetRows(grants, state.money, { now: serverNow() }));
}

// ---- rounds ------------------------------------------------------------------------------

/** @param {import('../../shared/domain/player-channel.js').RoundState} roundState */
function setRound(roundState) {
  const previous = state.round;
  state.round = {
    cycleId: roundState.cycleId,
    phase: roundState.phase,
    endsAt: roundState.phaseEndsAt ? Date.parse(roundState.phaseEndsAt) : null,
    startedAt: serverNow(),
  };
  // a new roll starts: the previous result leaves the stage
  if (roundState.phase === 'ROLLING' && previous?.phase !== 'ROLLING') el.result.textContent = '';
  // a new betting window: last round's notices are out of date
  if (roundState.phase === 'BETTING_OPEN' && previous && previous.cycleId !== roundState.cycleId) showMessage('', '');
  // a flight is drawn from its start and the service's clock as this message left it (D40)
  if (state.game === 'crash') crash.onRoundState(roundState, Date.now());
  // the cooldown follows the settlement of the cycle's rounds: one the history still shows in
  // play is read again, as a lost round moves no money and no balance_update says so (D33)
  if (roundState.phase === 'COOLDOWN' && previous && previous.phase !== 'COOLDOWN' && state.rounds.some((round) => round.state !== 'SETTLED' && !round.voided)) refreshRounds();
  renderRound();
  renderBetting();
}

// the session's round in the history, played under the current seed: rotation waits for
// every round to settle (D4)
/**
 * @param {string} roundId
 * @param {string} cycleId
 * @returns {HistoryRound}
 */
function roundEntry(roundId, cycleId) {
  let entry = state.rounds.find((round) => round.roundId === roundId);
  if (!entry) {
    entry = { roundId, cycleId, seedHash: state.fair.serverSeedHash, nonce: null, side: null, amountMicro: null, isFree: false, outcome: null, voided: null };
    state.rounds.unshift(entry);
  }
  return entry;
}

/** @param {Message<'bet_placed'>} msg */
function onBetPlaced(msg) {
  const entry = roundEntry(msg.roundId, msg.cycleId);
  Object.assign(entry, { side: msg.side, amountMicro: msg.amountMicro, isFree: msg.isFree });
  // crash: the bet's auto cash-out, or null for none (D40)
  if (msg.autoCashOut !== undefined) entry.autoCashOut = msg.autoCashOut;
  // Gem Vault: whether the play bought the feature; its amountMicro is then the feature's cost (D41)
  if (msg.featureBuy !== undefined) entry.featureBuy = msg.featureBuy;
  // the service's time of the message until its own record of the bet says (recent_rounds)
  entry.placedAt ??= msg.ts;
  // D1: an accepted bet's round takes the seed's next nonce, without gaps
  entry.nonce ??= state.fair.nonce++;
  state.betCycleId = msg.cycleId;
  const stake = msg.isFree ? t('free_bet') : state.money.amount(msg.amountMicro);
  if (state.game === 'gems') {
    // the result follows at once (D41): a message only while the play is still in flight; a
    // free play's amountMicro is its campaign's stake, whatever feature it buys (D42)
    if (!entry.play) showMessage(gemsPlacedText(msg), 'info');
  } else showMessage(state.game === 'crash' ? crash.betPlacedText(stake, msg.autoCashOut) : t('bet_placed', { side: sideName(msg.side ?? null), stake }), 'info');
  renderAll();
}

// a Gem Vault play accepted, in words: a spin at its stake, the feature at its price, or a free
// play (D42) at its grant's stake
/** @param {Message<'bet_placed'>} msg */
function gemsPlacedText(msg) {
  const amount = state.money.amount(msg.amountMicro);
  if (msg.isFree) return msg.featureBuy ? t('gems_free_feature_placed', { stake: amount }) : t('gems_free_play_placed', { stake: amount });
  return msg.featureBuy ? t('gems_feature_placed', { cost: amount }) : t('gems_play_placed', { stake: amount });
}

// ---- the session's rounds as the service recorded them (D33) ----------------------------

let refreshing = false;
let refreshAgain = false;

// recent_rounds: the session's last rounds with the balances the wallet answered. One
// request at a time; a reason to ask that comes while one is out asks once more after it.
function refreshRounds() {
  if (!socket || state.ended) return;
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  socket.timeout(ROUNDS_ACK_MS).emit('recent_rounds', {}, (err, ack) => {
    refreshing = false;
    if (!err && ack?.ok && Array.isArray(ack.rounds)) {
      for (const round of ack.rounds) mergeRound(round);
      // newest first; a round the service has not reported yet is the newest
      state.rounds.sort((a, b) => (b.placedAt ?? '~').localeCompare(a.placedAt ?? '~'));
      renderAll();
    }
    if (refreshAgain) {
      refreshAgain = false;
      refreshRounds();
    }
  });
}

// what the service recorded of a round, over what the page saw of it live
/** @param {RecalledRound} round */
function mergeRound(round) {
  const entry = roundEntry(round.roundId, round.cycleId);
  entry.cycleId ??= round.cycleId;
  Object.assign(entry, {
    side: round.side,
    amountMicro: round.amountMicro,
    isFree: round.isFree,
    placedAt: round.placedAt,
    state: round.state,
    won: round.won,
    voidReason: round.voidReason,
    rejectReason: round.rejectReason,
    balanceBefore: round.balanceBefore,
    balanceAfter: round.balanceAfter,
  });
  if (round.proof) {
    entry.seedHash = round.proof.serverSeedHash;
    entry.nonce = round.proof.nonce;
    entry.weights = { low: BigInt(round.proof.lowWeight), high: BigInt(round.proof.highWeight) };
    // D2, D5: a retired seed, which the service shows with its rounds
    if (round.proof.serverSeed) entry.seed = { serverSeed: round.proof.serverSeed, clientSeed: round.proof.clientSeed };
    // crash: the edge the crash point was derived with, which its check needs (D40)
    if (round.proof.commissionMicro !== undefined) entry.commissionMicro = round.proof.commissionMicro;
  }
  if (round.outcome) {
    entry.outcome = {
      side: round.outcome.side,
      face: round.outcome.face,
      won: round.won ?? entry.outcome?.won ?? false,
      payoutMicro: round.payoutMicro ?? entry.outcome?.payoutMicro ?? null,
    };
  }
  // crash (D40): the auto cash-out, and the flight once the round is resolved
  if (round.autoCashOut !== undefined) entry.autoCashOut = round.autoCashOut;
  if (round.won !== null && round.crashMultiplier) {
    entry.flight = {
      crashMultiplier: round.crashMultiplier,
      cashOutMultiplier: round.cashOutMultiplier ?? null,
      won: round.won,
      payoutMicro: round.payoutMicro ?? entry.flight?.payoutMicro ?? null,
    };
  }
  // Gem Vault (D41): a spin or a bought feature, and what it paid once its outcome is known
  if (round.featureBuy !== undefined) {
    entry.featureBuy = round.featureBuy;
    if (round.won !== null) entry.play = { won: round.won, payoutMicro: round.payoutMicro ?? entry.play?.payoutMicro ?? null };
  }
  if (round.state === 'VOIDED') entry.voided = round.voidReason;
}

// (each result ends one of the player's rounds: jurisdiction.refresh asks for their net
// position again)
/** @param {Message<'round_result'>} msg */
function onRoundResult(msg) {
  // D41: an instant play's result: its events are shown by Gem Vault's part of the page
  if ('events' in msg) {
    const entry = roundEntry(msg.roundId, msg.cycleId);
    entry.nonce = msg.nonce;
    entry.featureBuy = msg.featurePurchased;
    entry.play = { won: msg.won, payoutMicro: msg.payoutMicro };
    if (entry.seedHash === state.fair.serverSeedHash) state.fair.nonce = Math.max(state.fair.nonce, msg.nonce + 1);
    gems.onResult(msg);
    renderAll();
    refreshRounds();
    jurisdiction.refresh();
    return;
  }
  // a crash round's result (D40): its crash point, and its cash-out if it had one
  if (!('side' in msg)) {
    const entry = roundEntry(msg.roundId, msg.cycleId);
    entry.nonce = msg.nonce;
    entry.flight = { crashMultiplier: msg.crashMultiplier, cashOutMultiplier: msg.cashOutMultiplier, won: msg.won, payoutMicro: msg.payoutMicro };
    if (entry.seedHash === state.fair.serverSeedHash) state.fair.nonce = Math.max(state.fair.nonce, msg.nonce + 1);
    crash.onResult(msg);
    renderAll();
    refreshRounds();
    jurisdiction.refresh();
    return;
  }
  const entry = roundEntry(msg.roundId, msg.cycleId);
  const face = msg.diceValues?.[0] ?? msg.sum;
  entry.nonce = msg.nonce;
  entry.outcome = { side: msg.side, face, won: msg.won, payoutMicro: msg.payoutMicro };
  if (msg.lowWeight !== undefined) entry.weights = { low: BigInt(msg.lowWeight), high: BigInt(msg.highWeight) };
  // a bet whose bet_placed was missed (a reconnect): its side follows from won
  entry.side ??= msg.won ? msg.side : msg.side === 'LOW' ? 'HIGH' : 'LOW';
  if (entry.seedHash === state.fair.serverSeedHash) state.fair.nonce = Math.max(state.fair.nonce, msg.nonce + 1);
  state.lastResult = { cycleId: msg.cycleId, face, won: msg.won };
  const vars = { face, side: sideName(msg.side), amount: state.money.amount(msg.payoutMicro) };
  el.result.textContent = msg.won ? t('won', vars) : t('lost', vars);
  el.result.dataset.outcome = msg.won ? 'won' : 'lost';
  renderAll();
  refreshRounds();
  jurisdiction.refresh();
}

/** @param {Message<'round_voided'>} msg */
function onRoundVoided(msg) {
  const entry = roundEntry(msg.roundId, msg.cycleId);
  entry.voided = msg.reason;
  entry.state = 'VOIDED';
  entry.voidReason = msg.reason;
  el.result.textContent = t('voided', { reason: msg.reason });
  el.result.dataset.outcome = 'voided';
  renderAll();
  refreshRounds();
  jurisdiction.refresh();
}

// ---- betting (contract 8.2) -----------------------------------------------------------

// a reality check due holds the bets (the service refuses them: reality_check_due)
const canBet = () =>
  state.connected &&
  !state.ended &&
  !state.placing &&
  !jurisdiction.holdsBets() &&
  state.round?.phase === 'BETTING_OPEN' &&
  state.betCycleId !== state.round.cycleId;

// one unit of the currency within the limits, on the stake step (D46) when that stays within them
function defaultStake() {
  const { minBetMicro, maxBetMicro, stakeStepMicro } = betConfig();
  const within = MICRO_PER_UNIT < minBetMicro ? minBetMicro : MICRO_PER_UNIT > maxBetMicro ? maxBetMicro : MICRO_PER_UNIT;
  const stepped = onStep(within) ? within : (within / stakeStepMicro + 1n) * stakeStepMicro;
  return stepped <= maxBetMicro ? stepped : within;
}

// D46: a stake is a multiple of the session's stake step (the service refuses one that is not)
/** @param {bigint} micro */
const onStep = (micro) => betConfig().stakeStepMicro <= 0n || micro % betConfig().stakeStepMicro === 0n;

// a stake typed with more decimals than the currency has (D46: the page takes the digits it shows)
const decimalsText = () =>
  state.money.fractionDigits === 0
    ? t('stake_whole', { currency: state.money.currency })
    : t('stake_decimals', { currency: state.money.currency, digits: state.money.fractionDigits });

// the stake as micro-units, or null with the reason shown
function readStake({ quiet = false } = {}) {
  const parsed = state.money.parse(el.stake.value);
  let problem;
  if (!parsed.ok) problem = parsed.error === 'decimals' ? decimalsText() : t('stake_format', { example: state.money.input(EXAMPLE_STAKE_MICRO) });
  else if (parsed.micro < betConfig().minBetMicro || parsed.micro > betConfig().maxBetMicro) problem = reasonText('bet_out_of_range', rangeVars());
  else if (!onStep(parsed.micro)) problem = t('stake_step', { step: state.money.amount(betConfig().stakeStepMicro) });
  else {
    el.stake.removeAttribute('aria-invalid');
    return parsed.micro;
  }
  if (!quiet) {
    el.stake.setAttribute('aria-invalid', 'true');
    showMessage(problem, 'error');
  }
  return null;
}

/** @param {Side} side */
function placeBet(side) {
  // canBet() implies a socket and a round; the type check sees them only where checked
  if (!socket || !state.round || !canBet()) return;
  const amountMicro = readStake();
  if (amountMicro === null) return;
  const clientBetId = randomId();
  sendBet({ side, amountMicro: amountMicro.toString(), clientBetId });
}

// a bet of the stake field's amount with the game's parameters (crash: its auto cash-out)
/** @param {{ autoCashOut?: string }} params */
function placeGameBet(params) {
  if (!socket || !state.round || !canBet()) return;
  const amountMicro = readStake();
  if (amountMicro === null) return;
  sendBet({ ...params, amountMicro: amountMicro.toString(), clientBetId: randomId() });
}

// dice: the side chosen in the free-bet panel (D42)
const freeBetSide = () => (el.freeBetHigh.checked ? /** @type {const} */ ('HIGH') : /** @type {const} */ ('LOW'));

// a free bet (D42): the grant in place of the stake field's amount, with the game's parameters
// (dice: the panel's side; crash: the auto cash-out field when set; Gem Vault: none, its
// campaign says whether it buys the feature). The rounds left come from the service's next
// free_bets, never counted down here.
/** @param {string} grantId */
function playFreeBet(grantId) {
  // Gem Vault: `play` naming the grant, whose stake and feature buy are its campaign's (D41, D42)
  if (state.game === 'gems') return gems.playFree(grantId);
  if (!socket || !state.round || !canBet()) return;
  const params = state.game === 'crash' ? crash.betParams() : { side: freeBetSide() };
  if (params === undefined) return;
  sendBet(freeBetPayload(grantId, randomId(), params));
}

// place_bet, and its verdict (contract 8.2)
/** @param {import('../../shared/domain/player-channel.js').PlaceBet & { clientBetId: string }} payload */
function sendBet(payload) {
  if (!socket || !state.round) return;
  const { clientBetId } = payload;
  const cycleId = state.round.cycleId;
  state.placing = true;
  showMessage(t('placing'), 'info');
  renderBetting();
  socket.timeout(PLACE_BET_ACK_MS).emit('place_bet', payload, (err, ack) => {
    state.placing = false;
    if (err) showMessage(t('no_answer'), 'error');
    else if (ack.ok) {
      state.betCycleId ??= cycleId;
      // D42: the service's next free_bets counts this round as spent
      if (payload.freeBetGrantId !== undefined) state.spentGrantId = payload.freeBetGrantId;
    } else {
      const { reason } = ack;
      if (reason === 'already_bet_this_round') state.betCycleId = cycleId;
      reportRejection(reason, clientBetId);
    }
    renderBetting();
  });
}

// a refused bet arrives twice (the ack and bet_rejected, D4): explain it once
/**
 * @param {string} reason
 * @param {string} [clientBetId]
 */
function reportRejection(reason, clientBetId) {
  if (clientBetId) {
    if (state.reportedBets.has(clientBetId)) return;
    state.reportedBets.add(clientBetId);
  }
  const max = jurisdiction.maxStakeMicro();
  showMessage(reasonText(reason, { ...rangeVars(), jurisdictionMax: max === null ? undefined : state.money.amount(max) }), 'error');
  // the refused bet's round is over: where the player stands, and a reality check it says is due
  jurisdiction.onRefused(reason);
}

function randomId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

// ---- seeds (D5) and verification (D2) ---------------------------------------------------

function rotateSeed() {
  // a connected page has its socket; the type check sees it only where checked
  if (!socket || !state.connected || state.ended || state.rotating) return;
  const clientSeed = el.clientSeed.value;
  if (clientSeed !== '' && !CLIENT_SEED.test(clientSeed)) {
    el.clientSeed.setAttribute('aria-invalid', 'true');
    showMessage(t('client_seed_invalid'), 'error');
    return;
  }
  el.clientSeed.removeAttribute('aria-invalid');
  state.rotating = true;
  renderFair();
  socket.timeout(ROTATE_ACK_MS).emit('rotate_seed', clientSeed === '' ? {} : { clientSeed }, (err, ack) => {
    state.rotating = false;
    if (err) showMessage(t('no_answer'), 'error');
    else if (!ack.ok) showMessage(reasonText(ack.reason), 'error');
    else {
      // the retired seed is revealed: every round played under it can now be checked
      state.revealed.set(ack.previousServerSeedHash, { serverSeed: ack.previousServerSeed, clientSeed: ack.previousClientSeed, lastNonce: ack.lastNonce });
      state.fair = { serverSeedHash: ack.serverSeedHash, clientSeed: ack.clientSeed, nonce: 0 };
      el.clientSeed.value = ack.clientSeed;
      showMessage(t('rotated'), 'info');
    }
    renderFair();
    renderHistoryPanel();
  });
}

/** @param {string | undefined} roundId */
async function verify(roundId) {
  const round = state.rounds.find((entry) => entry.roundId === roundId);
  const seed = round && (round.seed ?? (round.seedHash === null ? undefined : state.revealed.get(round.seedHash)));
  if (seed && round.flight) return verifyFlight(round, seed);
  if (!seed || !round.outcome) return;
  let derived = null;
  try {
    // the hash to check is the one the page was shown as committed when the round was played
    derived = await deriveRound({ serverSeed: seed.serverSeed, committedHash: round.seedHash, clientSeed: seed.clientSeed, nonce: round.nonce, ...round.weights });
  } catch {
    // no Web Crypto (an insecure page): said so below
  }
  renderVerification(el.verifyOutput, { nonce: round.nonce, seedHash: round.seedHash, outcome: round.outcome }, seed, derived);
  el.verifyOutput.hidden = false;
  el.verifyOutput.focus();
}

// a crash round (D40): its crash point recomputed from the seeds and its edge, against the
// one round_result named
/**
 * @param {HistoryRound} round
 * @param {{ serverSeed: string, clientSeed: string | null }} seed
 */
async function verifyFlight(round, seed) {
  const crashMultiplier = round.flight?.crashMultiplier;
  const { nonce, commissionMicro } = round;
  if (!crashMultiplier || commissionMicro === undefined || nonce === null || seed.clientSeed === null) return;
  const clientSeed = seed.clientSeed;
  let derived = null;
  try {
    derived = await deriveCrash({ serverSeed: seed.serverSeed, committedHash: round.seedHash, clientSeed, nonce, commissionMicro: BigInt(commissionMicro) });
  } catch {
    // no Web Crypto (an insecure page): said so below
  }
  renderCrashVerification(el.verifyOutput, { nonce, seedHash: round.seedHash, crashMultiplier, commissionMicro }, { serverSeed: seed.serverSeed, clientSeed }, derived, crash.multiplierFigures);
  el.verifyOutput.hidden = false;
  el.verifyOutput.focus();
}

// ---- the end (D4 session_ended, connect_error, a reload) ---------------------------------

// kind 'refused': the game cannot start (a handshake refusal, or a page without its token:
// reason 'reload'); 'ended': the session ended during play
/**
 * @param {'refused' | 'ended'} kind
 * @param {string} reason
 */
function endGame(kind, reason) {
  state.ended = true;
  state.connected = false;
  jurisdiction.end();
  el.body.dataset.ended = kind;
  el.endedTitle.textContent = kind === 'ended' ? t('ended_title') : reason === 'reload' ? t('reload_title') : t('ended_title_refused');
  el.endedText.textContent = kind === 'ended' ? endText(reason) : refusalText(reason);
  el.returnLink.hidden = state.returnUrl === null;
  if (state.returnUrl) el.returnLink.href = state.returnUrl;
  el.ended.hidden = false;
  el.ended.focus();
  setConnection('closed');
  renderAll();
}

// ---- rendering ---------------------------------------------------------------------------

/** @param {'live' | 'reconnecting' | 'closed'} kind */
function setConnection(kind) {
  el.body.dataset.connection = kind;
  el.connection.textContent = connectionText(kind);
  renderBetting();
}

/**
 * @param {string} text
 * @param {'info' | 'error' | ''} kind
 */
function showMessage(text, kind) {
  el.message.textContent = text;
  el.message.dataset.kind = kind; // '' when cleared
}

/** @param {string} balanceMicro */
function setBalance(balanceMicro) {
  state.balanceMicro = balanceMicro;
  renderBalance();
  // replay the highlight on every change
  el.balance.classList.remove('changed');
  void el.balance.offsetWidth;
  el.balance.classList.add('changed');
}

// everything in words, after the language changed
function renderTexts() {
  el.connection.textContent = connectionText(el.body.dataset.connection);
  if (state.config) renderChips();
  renderAll();
}

function renderAll() {
  renderBalance();
  jurisdiction.render();
  renderRound();
  renderBetting();
  renderHistoryPanel();
  renderFair();
}

function renderBalance() {
  el.balance.textContent = state.balanceMicro === null || state.balanceMicro === undefined ? '—' : state.money.amount(state.balanceMicro);
}

// The table's next round is still to start: the session is connected and either no round
// has been announced yet (a table's first cycle starts when its first player connects, D1)
// or the announced one is PENDING, before its betting opens
// (an instant game has no round to wait for, D41)
const roundStarting = () => state.game !== 'gems' && state.connected && !state.ended && (!state.round || state.round.phase === 'PENDING');

function renderRound() {
  if (state.game === 'gems') return renderPlays();
  const round = state.round;
  const phase = round?.phase ?? (roundStarting() ? 'PENDING' : null);
  el.phase.textContent = phase ? (flying() ? t('crash_phase_flying') : phaseText(phase)) : t('phase_connecting');
  el.phase.dataset.phase = phase ?? '';
  renderCountdown();
  if (state.game === 'crash') crash.render();
  else renderDie();
}

// Gem Vault (D41): no shared clock, so no phase nor countdown; the heading says whether the
// page can play
function renderPlays() {
  el.phase.textContent = !state.connected && !state.ended ? t('phase_connecting') : t('gems_phase');
  el.phase.dataset.phase = '';
  el.countdown.textContent = '';
  gems.render();
}

// a crash cycle's ROLLING is its flight (D40): its phaseEndsAt is the latest it could end, not
// a time to count down to
const flying = () => state.game === 'crash' && state.round?.phase === 'ROLLING';

// the time left in the round's phase (ms, 0 when unknown or over)
const remainingMs = () => (state.round?.endsAt && !state.ended ? Math.max(0, state.round.endsAt - serverNow()) : 0);

function renderCountdown() {
  const round = state.round;
  const remaining = flying() ? 0 : remainingMs();
  el.countdown.textContent = remaining > 0 ? t('countdown', { seconds: Math.ceil(remaining / 1000) }) : '';
  const total = round?.endsAt ? round.endsAt - round.startedAt : 0;
  // CSSOM, not a style attribute: allowed by the page's style-src 'self' (D16)
  el.timerBar.style.setProperty('--progress', total > 0 ? String(Math.min(1, remaining / total)) : '0');
  if (roundStarting()) renderStarting();
}

// While the next round is still to start, the caption says when: in N seconds when the
// service announced the phase's end, else that it starts in a moment. Written only when it
// changes, as the countdown's interval calls it several times a second.
function renderStarting() {
  const remaining = remainingMs();
  const text = remaining > 0 ? t('caption_starts_in', { seconds: Math.ceil(remaining / 1000) }) : t('caption_starting');
  const caption = state.game === 'crash' ? el.flightCaption : el.dieCaption;
  if (caption.textContent !== text) caption.textContent = text;
}

/** @type {ReturnType<typeof setInterval> | null} */
let flicker = null;

function renderDie() {
  const round = state.round;
  const current = round && state.lastResult?.cycleId === round.cycleId ? state.lastResult : null;
  const rolling = !state.ended && round?.phase === 'ROLLING' && !current;
  const bet = round && state.rounds.find((entry) => entry.cycleId === round.cycleId && entry.side);
  el.die.classList.toggle('rolling', rolling);
  el.die.dataset.outcome = current ? (current.won ? 'won' : 'lost') : '';
  // a face from an earlier round is shown dimmed
  el.die.classList.toggle('stale', !rolling && !current && state.lastResult !== null);
  if (rolling && !flicker) {
    // a different face each tick, for show only: the outcome comes with round_result
    flicker = setInterval(() => {
      el.die.dataset.face = String(((Number(el.die.dataset.face) + Math.floor(Math.random() * 5)) % 6) + 1);
    }, 110);
  } else if (!rolling && flicker) {
    clearInterval(flicker);
    flicker = null;
  }
  if (!rolling) el.die.dataset.face = String(current?.face ?? state.lastResult?.face ?? 0);
  el.die.setAttribute('aria-label', rolling ? t('die_rolling') : el.die.dataset.face === '0' ? t('die_blank') : t('die_label', { face: el.die.dataset.face }));
  if (bet) {
    // a bet seen only in its round_result (bet_placed missed over a reconnect) has no stake
    // until recent_rounds brings it: shown as the history shows it
    const stake = bet.isFree ? t('free_bet') : bet.amountMicro === null ? '—' : state.money.amount(bet.amountMicro);
    el.dieCaption.textContent = t('caption_bet', { side: sideName(bet.side), stake });
  } else if (roundStarting()) {
    renderStarting();
  } else {
    el.dieCaption.textContent = round && ['ROLLING', 'RESULT', 'COOLDOWN'].includes(round.phase) ? t('caption_no_bet') : t('caption_idle');
  }
}

function renderChips() {
  const { minBetMicro, maxBetMicro } = betConfig();
  // a chip is a stake the service takes: within the limits and on the step (D46)
  const amounts = [minBetMicro, ...CHIP_UNITS.map((units) => units * MICRO_PER_UNIT), maxBetMicro]
    .filter((micro, index, all) => micro >= minBetMicro && micro <= maxBetMicro && onStep(micro) && all.indexOf(micro) === index);
  el.chips.replaceChildren(
    ...amounts.map((micro) => {
      const chip = document.createElement('button');
      chip.type = 'button';
      chip.className = 'chip';
      chip.dataset.micro = micro.toString();
      const tag = micro === minBetMicro ? t('chip_min') : micro === maxBetMicro ? t('chip_max') : '';
      if (tag) {
        const small = document.createElement('small');
        small.textContent = tag;
        chip.append(small, ' ');
      }
      chip.append(state.money.short(micro));
      chip.addEventListener('click', () => {
        el.stake.value = state.money.input(micro);
        readStake({ quiet: true });
        renderBetting();
      });
      return chip;
    }),
  );
}

function renderBetting() {
  const open = canBet();
  el.betLow.disabled = !open || state.game !== 'dice';
  el.betHigh.disabled = !open || state.game !== 'dice';
  el.body.dataset.placing = String(state.placing);
  // renderChips fills #chips with buttons only
  const chips = /** @type {HTMLCollectionOf<HTMLButtonElement>} */ (el.chips.children);
  for (const chip of chips) chip.disabled = state.ended;
  el.stake.disabled = state.ended;
  if (!state.config) return;
  el.stakeLabel.textContent = t('stake_label', { currency: state.money.symbol });
  el.stakeHint.textContent = t('stake_hint', rangeVars());
  const stake = readStake({ quiet: true });
  for (const chip of chips) chip.classList.toggle('active', stake !== null && chip.dataset.micro === stake.toString());
  if (state.game === 'crash') {
    renderFreeBetPanel();
    return crash.renderBetting();
  }
  // Gem Vault draws the panel itself, whenever its buttons change (gems.js)
  if (state.game === 'gems') return gems.renderBetting();
  renderFreeBetPanel();
  el.freeBetCaption.textContent = freeBetSideCaption(freeBetSide());
  const { multiplierScaled, commissionMicro } = state.config;
  el.potential.textContent =
    stake === null
      ? ''
      : t('potential', {
          amount: state.money.amount(netPayout(stake, multiplierScaled, commissionMicro)),
          multiplier: state.money.ratio(multiplierScaled),
          // a fraction of 100000 (contract 2.12) as a percentage: 3000 -> 3
          commission: state.money.ratio(commissionMicro * 100n),
        });
}

// The free-bets panel (D42): its buttons play when the game's own would (dice and crash: the
// round's betting open; Gem Vault: no play in flight, minRoundMs past)
function renderFreeBetPanel() {
  if (!state.config) return;
  const open = state.game === 'gems' ? gems.canPlay() : canBet();
  renderFreeBets(el.freeBets, el.freeBetsList, freeBetRows(state.freeBets, state.money, { now: serverNow() }), { canPlay: open, onPlay: playFreeBet });
}

function renderHistoryPanel() {
  const cells = state.game === 'crash' ? crash.historyCells : state.game === 'gems' ? gems.historyCells : undefined;
  renderHistory(el.history, state.rounds, { revealed: state.revealed, sideName, money: state.money, cells });
  el.historyGame.textContent = t('history_game', { game: gameTitle() });
  el.historyEmpty.hidden = state.rounds.length > 0;
}

function renderFair() {
  el.serverSeedHash.textContent = state.fair.serverSeedHash ?? '—';
  el.currentClientSeed.textContent = state.fair.clientSeed ?? '—';
  el.nonce.textContent = state.config ? String(state.fair.nonce) : '—';
  el.rotateSeed.disabled = !state.connected || state.ended || state.rotating;
  el.clientSeed.disabled = state.ended;
  renderRevealed(el.revealedList, state.revealed);
  el.revealed.hidden = state.revealed.size === 0;
}

// ---- input ---------------------------------------------------------------------------------

el.betLow.addEventListener('click', () => placeBet('LOW'));
el.betHigh.addEventListener('click', () => placeBet('HIGH'));
for (const side of [el.freeBetLow, el.freeBetHigh]) side.addEventListener('change', renderBetting);
el.rotateSeed.addEventListener('click', rotateSeed);
el.stake.addEventListener('input', () => {
  el.stake.removeAttribute('aria-invalid');
  renderBetting();
});
const normaliseStake = () => {
  const parsed = state.money.parse(el.stake.value);
  if (parsed.ok) el.stake.value = state.money.input(parsed.micro);
  renderBetting();
};
el.stake.addEventListener('blur', normaliseStake);
// Enter only tidies the stake; a bet is always an explicit LOW or HIGH
el.stake.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter') return;
  event.preventDefault();
  normaliseStake();
});
el.clientSeed.addEventListener('input', () => el.clientSeed.removeAttribute('aria-invalid'));
el.history.addEventListener('click', (event) => {
  // a click's target is an element (here one in the table), never a text node
  /** @type {HTMLButtonElement | null} */
  const button = /** @type {Element} */ (event.target).closest('button.verify');
  if (button) void verify(button.dataset.roundId);
});
// L and H bet, unless the player is typing (crash: its own keys, crash.js; Gem Vault's, gems.js)
document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  if (/** @type {Partial<Element>} */ (event.target).closest?.('input, textarea, select, [contenteditable]')) return;
  // the reality check's keys are its own
  if (jurisdiction.isOpen()) return;
  if (state.game === 'crash') return crash.shortcut(event.key.toLowerCase());
  if (state.game === 'gems') return gems.shortcut(event.key.toLowerCase());
  const side = /** @type {Partial<Record<string, Side>>} */ ({ l: 'LOW', h: 'HIGH' })[event.key.toLowerCase()];
  if (side) placeBet(side);
});

// contract 5.6: the token's lang and currency, until the channel's `connected` confirms them
const launch = displayClaims(token);
// a page without a token is a reload (or a tab restored) when this tab remembers a launch,
// or the browser says so: its session goes on only from a new launch by the casino
const remembered = token ? null : rememberedLaunch(storage);
const reloaded = remembered !== null || /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType('navigation')[0])?.type === 'reload';
if (token) rememberLaunch(storage, { lang: launch.lang, returnUrl: null });
state.money = moneyFormat(resolveLanguage(launch.lang).locale, launch.currency);
await setLanguage(token ? launch.lang : (remembered?.lang ?? null));
setInterval(renderCountdown, 200);
renderTexts();
if (token) connect();
else if (reloaded) {
  // the operator's returnUrl is offered as the way back, when the first load learned it
  state.returnUrl = remembered?.returnUrl ?? null;
  endGame('refused', 'reload');
} else endGame('refused', 'invalid_token');
