import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, watch } from '../../support/browser.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer } from '../../support/game.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { freePort } from '../../support/processes.js';
import { RECALL_FUNDS, RECALL_STAKE, playRecallRounds, type RecallRound, type RecallRounds } from '../../support/recall.js';
import { crashOperator, crashSeed, seatCrashPlayer } from '../../support/crash.js';
import { curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { centsText } from '../../../src/shared/domain/games/crash.js';
import { gemsOperator, gemsSeed, seatGemsPlayer, triggered } from '../../support/gems.js';

// Game recall (D33) in a real headless Chromium (Debian's, as demo-in-browser.test.ts drives
// it): the recall page of a won, a lost and a voided round shows the round as the player
// lived it, money in major units of the round's currency (D38), and checks the proof in the
// page; the player's game page shows the session's last 10 rounds with the same details,
// again from its launch URL. A Gem Vault round (D41) shows its play: the bet, the base spin's
// grid, every event with what it paid (each free spin with its grid) and the total. No request
// leaves the service. Leaves docs/replay-page.png and docs/gems-recall.png.
const NBSP = '\u00a0';

// 123456789 micro-units as "1,234.56": whole units grouped in threes and the euro's two
// decimals, the micro-units beyond them cut off (D38, D46, the way money.js writes it in English)
function euros(micro: bigint): string {
  const units = (micro / 100_000n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = (micro % 100_000n).toString().padStart(5, '0').slice(0, 2);
  return `${units}.${fraction}`;
}

describe('game recall in a browser (D33, D38)', function () {
  this.timeout(180_000);
  let h: Harness;
  let browser: Browser;
  let origins: string[];
  let rounds: RecallRounds;
  const problems: string[] = [];

  before(async () => {
    // the page connects only to PUBLIC_URL (D24): the service listens where PUBLIC_URL says
    const port = await freePort();
    h = await startHarness({ PUBLIC_URL: `http://127.0.0.1:${port}` }, ROLE_NAMES, { port });
    origins = [`http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}`];
    rounds = await playRecallRounds(h);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  const linkOf = async (round: RecallRound) => {
    const answer = await round.operator.request('GET', `/v1/rounds/${round.roundId}/replay-url`);
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.url as string;
  };

  async function open(url: string): Promise<{ page: Page; fact: (name: string) => Promise<string> }> {
    const page = await browser.newPage({ viewport: { width: 1000, height: 1200 } });
    watch(page, origins, problems);
    const response = await page.goto(url);
    expect(response?.status()).to.equal(200);
    await page.locator('#recall-facts dd[data-fact="state"]').waitFor({ state: 'attached', timeout: 15_000 });
    return { page, fact: (name) => page.locator(`#recall-facts dd[data-fact="${name}"]`).innerText() };
  }

  it('shows a won round with the balances the wallet answered, and its proof checks in the page', async () => {
    const { page, fact } = await open(await linkOf(rounds.won));
    expect(await page.title()).to.equal('Round recall');
    expect(await fact('game')).to.equal('Dice');
    expect(await fact('round')).to.equal(rounds.won.roundId);
    expect(await fact('player')).to.equal(rounds.won.seat.playerRef);
    expect(await fact('jurisdiction')).to.equal('MT: no jurisdiction profile');
    expect(await fact('placed')).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await fact('bet')).to.equal(`LOW · €${euros(RECALL_STAKE)}`);
    expect(await fact('balance-before')).to.equal(`€${euros(RECALL_FUNDS)}`);
    expect(await fact('balance-after')).to.equal(`€${euros(RECALL_FUNDS - RECALL_STAKE + rounds.payoutMicro)}`);
    expect(await fact('outcome')).to.match(/^die [1-3] \(LOW\)$/);
    expect(await fact('payout')).to.equal(`€${euros(rounds.payoutMicro)}`);
    expect(await fact('state')).to.equal('settled: won');
    const verdict = await page.locator('#verify-output .verdict').innerText({ timeout: 15_000 });
    expect(verdict).to.match(/^MATCH/);
    expect(await page.locator('#recall-validity').innerText()).to.match(/^This link works until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.$/);
    await page.screenshot({ path: 'docs/replay-page.png', fullPage: true });
    await page.close();
  });

  it('shows a lost round: no payout, the balance after is the debit\'s answer; the proof checks', async () => {
    const { page, fact } = await open(await linkOf(rounds.lost));
    expect(await fact('bet')).to.equal(`HIGH · €${euros(RECALL_STAKE)}`);
    expect(await fact('balance-before')).to.equal(`€${euros(RECALL_FUNDS)}`);
    expect(await fact('balance-after')).to.equal(`€${euros(RECALL_FUNDS - RECALL_STAKE)}`);
    expect(await fact('outcome')).to.match(/^die [1-3] \(LOW\)$/);
    expect(await fact('payout')).to.equal('€0.00');
    expect(await fact('state')).to.equal('settled: lost');
    expect(await page.locator('#verify-output .verdict').innerText({ timeout: 15_000 })).to.match(/^MATCH/);
    await page.close();
  });

  it('shows a voided round with its reason and the stake back, and says there is nothing to check', async () => {
    const { page, fact } = await open(await linkOf(rounds.voided));
    expect(await fact('state')).to.equal('voided (session_terminated)');
    expect(await fact('outcome')).to.equal('none (the round ended before the roll)');
    expect(await fact('payout')).to.equal('none: the stake was returned');
    expect(await fact('balance-before')).to.equal(`€${euros(RECALL_FUNDS)}`);
    expect(await fact('balance-after')).to.equal(`€${euros(RECALL_FUNDS)}`);
    expect(await page.locator('#recall-proof-status').innerText()).to.equal('This round has no outcome, so there is nothing to check.');
    expect(await page.locator('#verify-output').isHidden()).to.equal(true);
    await page.close();
  });

  it('shows a crash round\'s flight: the auto cash-out, the crash point, the cash-out with its time; the crash point checks in the page (D40)', async () => {
    const { serverSeed, crashCents } = crashSeed(300n, 1000n);
    const operator = await crashOperator(h);
    const seat = await seatCrashPlayer(h, operator, serverSeed, RECALL_FUNDS);
    await bettingWindowWithRoom(seat.player, 500);
    const stake = 1_000_000n;
    const bet = await seat.player.request('place_bet', { amountMicro: stake.toString(), autoCashOut: '1.10' });
    expect(bet.ok, JSON.stringify(bet)).to.equal(true);
    const result = await seat.player.waitFor('round_result', (m) => m.roundId === bet.roundId, 20_000);
    expect(result).to.include({ won: true, cashOutMultiplier: '1.10', crashMultiplier: centsText(crashCents) });
    expect((await operator.request('POST', `/v1/session/${seat.sessionId}/terminate`, {})).status).to.equal(200);
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    seat.player.close();

    const { page, fact } = await open(await linkOf({ roundId: bet.roundId, seat, operator }));
    expect(await fact('game')).to.equal('Crash');
    expect(await fact('bet')).to.equal(`auto cash-out 1.10× · €${euros(stake)}`);
    expect(await fact('outcome')).to.equal(`crashed at ${centsText(crashCents)}×`);
    const seconds = (curveTime(110n) / 1000).toFixed(3);
    expect(await fact('cash-out')).to.equal(`1.10× at ${seconds} s into the flight`);
    expect(await fact('payout')).to.equal(`€${euros((stake * 110n) / 100n)}`);
    expect(await fact('balance-after')).to.equal(`€${euros(RECALL_FUNDS - stake + (stake * 110n) / 100n)}`);
    expect(await fact('state')).to.equal('settled: won');
    expect(await page.locator('#flight').isVisible()).to.equal(true);
    expect(await page.locator('#die').isHidden()).to.equal(true);
    expect(await page.locator('#flight-crash').innerText()).to.equal(`crashed at ${centsText(crashCents)}×`);
    const verdict = page.locator('#verify-output .verdict');
    expect(await verdict.innerText({ timeout: 15_000 })).to.match(/^MATCH/);
    expect(await verdict.getAttribute('data-match')).to.equal('true');
    await page.close();
  });

  it("shows a Gem Vault round: the bet, the base spin's grid, every event in order with what it paid, each free spin with its grid, and the total (D41)", async () => {
    // a sandbox operator's seeds (D35): the spin at nonce 0 triggers the feature
    const stake = 1_000_000n;
    const operator = await gemsOperator(h);
    const seat = await seatGemsPlayer(h, operator, { serverSeed: gemsSeed([triggered], { stakeMicro: stake }) }, RECALL_FUNDS);
    const ack = await seat.player.request('play', { amountMicro: stake.toString() });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const result = await seat.player.waitFor('round_result', (m) => m.roundId === ack.roundId, 20_000);
    type Event = { type: string; subOutcome: Record<string, any>; payoutMicro: string };
    const events = result.events as Event[];
    const trigger = events.find((event) => event.type === 'FEATURE_TRIGGER')!;
    const freeSpins = events.filter((event) => event.type === 'FREE_SPIN');
    expect(freeSpins.length).to.be.at.least(1);
    expect(events.some((event) => event.type === 'JACKPOT')).to.equal(false);
    const payout = BigInt(result.payoutMicro);
    expect(payout).to.equal(events.reduce((sum, event) => sum + BigInt(event.payoutMicro), 0n));
    // the session ends: its seed is revealed (D28)
    expect((await operator.request('POST', `/v1/session/${seat.sessionId}/terminate`, {})).status).to.equal(200);
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    seat.player.close();

    const { page, fact } = await open(await linkOf({ roundId: ack.roundId, seat, operator }));
    expect(await fact('game')).to.equal('Gem Vault');
    expect(await fact('bet')).to.equal(`spin · €${euros(stake)}`);
    expect(await fact('payout')).to.equal(`€${euros(payout)}`);
    expect(await fact('outcome')).to.equal(`events: ${events.length} · total win €${euros(payout)}`);
    expect(await fact('balance-after')).to.equal(`€${euros(RECALL_FUNDS - stake + payout)}`);
    expect(await fact('state')).to.equal('settled: won');
    // the play in place of dice's die
    expect(await page.locator('#die').isVisible()).to.equal(false);
    expect(await page.locator('#gems-play').isVisible()).to.equal(true);
    expect(await page.locator('#gems-bet').innerText()).to.equal(`spin · €${euros(stake)}`);
    // the base spin's grid, its Vaults lit as the feature's trigger
    const symbols = (cells: string) => page.locator(cells).evaluateAll((gems) => gems.map((gem) => (gem as HTMLElement).dataset.symbol));
    expect(await symbols('#gems-base .gem')).to.deep.equal((result.baseGame as { grid: string[][] }).grid.flat());
    expect(await page.locator('#gems-base .gem.scatter').count()).to.equal(trigger.subOutcome.scatters);
    expect(await page.locator('#gems-base .gems-grid').getAttribute('aria-label')).to.match(/^The reels, row by row: /);
    // every event, in order: the count, each type, the trigger, each free spin with its grid
    const items = page.locator('#gems-events > li');
    expect(await items.count()).to.equal(events.length);
    expect(await items.evaluateAll((list) => list.map((item) => (item as HTMLElement).dataset.type))).to.deep.equal(events.map((event) => event.type));
    expect(await page.locator('#gems-events li[data-type="FEATURE_TRIGGER"] .gems-event-text').innerText()).to.equal(
      `${trigger.subOutcome.scatters} Vaults pay €${euros(BigInt(trigger.payoutMicro))}: 8 free spins at ×${trigger.subOutcome.multiplier}`,
    );
    const spins = page.locator('#gems-events li[data-type="FREE_SPIN"]');
    expect(await spins.locator('.gems-event-text').allInnerTexts()).to.deep.equal(
      freeSpins.map((event, k) => (BigInt(event.payoutMicro) > 0n ? `Free spin ${k + 1} of 8: €${euros(BigInt(event.payoutMicro))}` : `Free spin ${k + 1} of 8: no win`)),
    );
    for (const [k, event] of freeSpins.entries()) {
      expect(await spins.nth(k).locator('.gem').evaluateAll((gems) => gems.map((gem) => (gem as HTMLElement).dataset.symbol)), `free spin ${k + 1}`).to.deep.equal(
        (event.subOutcome.grid as string[][]).flat(),
      );
    }
    // the total: the round's payout
    expect(await page.locator('#gems-total').innerText()).to.equal(`Total win: €${euros(payout)}`);
    // no check in the page: the proof is checked with rgs verify
    expect(await page.locator('#recall-proof-status').innerText()).to.equal(
      'This page does not recompute a Gem Vault round: its proof, with the revealed server seed above, is checked with rgs verify.',
    );
    expect(await page.locator('#verify-output').isHidden()).to.equal(true);
    await page.screenshot({ path: 'docs/gems-recall.png', fullPage: true });
    // a phone's width
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('speaks the language the link names, with its number format (D38)', async () => {
    const { page, fact } = await open(`${await linkOf(rounds.lost)}&lang=de`);
    expect(await page.locator('html').getAttribute('lang')).to.equal('de');
    expect(await fact('balance-before')).to.equal(`1.000,00${NBSP}€`);
    expect(await fact('state')).to.equal('abgerechnet: verloren');
    await page.close();
  });

  it('the game page shows the session\'s last 10 rounds with their details, again when its launch URL is opened again', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 800, rollingWindowMs: 100, cooldownMs: 100 });
    const seat = await seatPlayer(h, operator, RECALL_FUNDS);
    const played: string[] = [];
    for (let i = 0; i < 11; i++) {
      await bettingWindowWithRoom(seat.player, 400);
      const bet = await seat.player.request('place_bet', { side: i % 2 === 0 ? 'LOW' : 'HIGH', amountMicro: RECALL_STAKE.toString() });
      expect(bet.ok, JSON.stringify(bet)).to.equal(true);
      await seat.player.waitFor('round_result', (m) => m.roundId === bet.roundId, 15_000);
      played.push(bet.roundId);
    }
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    const finalBalance = h.wallet.balanceOf(seat.playerRef, 'EUR');

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    const launchUrl = `${origins[0]}/play/dice?token=${seat.token}`;
    const rows = page.locator('#history tr[data-round-id]');
    const expectLastTen = async () => {
      await page.locator('#history tr[data-round-id] .balance-cell .after').nth(9).filter({ hasText: /\d/ }).waitFor({ timeout: 15_000 });
      expect(await rows.count()).to.equal(10);
      // newest first: the 11th round down to the 2nd; the 1st (nonce 0) is no longer kept
      expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.roundId))).to.deep.equal(played.slice(1).reverse());
      // each cell's parts (a tag, an amount, a line) joined by a space
      const cells = await rows.evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => [...td.childNodes].map((part) => part.textContent!.trim()).filter(Boolean).join(' '))),
      );
      expect(cells.map((row) => row[0])).to.deep.equal(['10', '9', '8', '7', '6', '5', '4', '3', '2', '1']);
      for (const [nonce, time, bet, result, payout, balance] of cells) {
        expect(time, `nonce ${nonce}`).to.match(/^\d\d:\d\d:\d\d$/);
        expect(bet).to.match(new RegExp(`^(LOW|HIGH) ${euros(RECALL_STAKE)}$`));
        expect(result).to.match(/^[1-6] (LOW|HIGH) settled: (won|lost)$/);
        expect(payout).to.match(result!.endsWith('won') ? /^\+\d+\.\d\d$/ : /^0\.00$/);
        expect(balance).to.match(/^[\d,]+\.\d\d → [\d,]+\.\d\d$/);
      }
      // the newest round's balance after is the wallet's balance now
      expect(cells[0]![5]).to.match(new RegExp(`→ ${euros(finalBalance).replace('.', '\\.')}$`));
      expect(await page.locator('#history-game').innerText()).to.match(/^Dice · times in UTC/);
    };
    await page.goto(launchUrl);
    await expectLastTen();
    // the page opened again from its launch URL (not a reload: the token left the address bar, contract 5.6)
    await page.goto(launchUrl);
    await expectLastTen();
    await page.close();
    seat.player.close();
    await operator.request('POST', `/v1/session/${seat.sessionId}/terminate`, {});
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
