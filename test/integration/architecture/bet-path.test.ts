import { existsSync, readFileSync } from 'node:fs';
import { Session, type Profiler } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer, until } from '../../support/game.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { ownStore } from '../../support/own-store.js';

// docs/architecture.md names every file a bet crosses, from `place_bet` to its win's
// settlement. This test holds it to the code: V8's precise coverage, reset when the player
// sends `place_bet` and read once the win is settled, gives every file of src/ that ran for
// the bet. Each file the document lists must have run; each file that ran must be on its path
// or in its list of what runs beside a bet (timers of the same process). The wallet
// simulator (src/simulator) is the operator's wallet, not the service: left out.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const doc = readFileSync(new URL('../../../docs/architecture.md', import.meta.url), 'utf8');

// the `src/...` file of each table row between the section's markers (its first cell, or its
// second after the step's number)
function listedFiles(name: string): string[] {
  const match = doc.match(new RegExp(`<!-- ${name}:begin -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`));
  expect(match, `docs/architecture.md has a ${name} section`).to.not.equal(null);
  return [...match![1]!.matchAll(/^\|(?:[^|`\n]*\|)?\s*`(src\/[^`]+)`/gm)].map((m) => m[1]!);
}

describe('the bet path in docs/architecture.md is the code’s', function () {
  this.timeout(60_000);
  const path = listedFiles('bet-path');
  const beside = listedFiles('bet-path-beside');
  let h: Harness;
  let store: Awaited<ReturnType<typeof ownStore>> | undefined;
  let operator: TestOperator;
  const inspector = new Session();

  before(async () => {
    // a database and queues of its own: no earlier file's cycles or retries run meanwhile
    store = await ownStore('betpath');
    h = await startHarness({ ...store.env, WALLET_CALL_TIMEOUT_MS: '5000' }, ROLE_NAMES);
    // D2: a table that always rolls LOW, so the LOW bet wins and its win call is made
    operator = await operatorWith(h, { lowWeight: 1n, highWeight: 0n });
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  });
  after(async () => {
    inspector.disconnect();
    await h?.close();
    await store?.drop();
  });

  // the files of src/ whose functions ran from place_bet to the win settled
  async function filesOfAWinningBet(): Promise<string[]> {
    const seat = await seatPlayer(h, operator, 10_000_000n);
    await bettingWindowWithRoom(seat.player, 400);
    // counts start again here: the launch and the connect are not the bet's path
    await inspector.post('Profiler.takePreciseCoverage');
    const ack = await seat.player.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await until('the win settled', async () => (await h.svc.db.bet.findUnique({ where: { id: ack.betId } }))?.status === 'SETTLED', 15_000);
    const { result } = await inspector.post('Profiler.takePreciseCoverage');
    seat.player.close();
    return ran(result);
  }

  const ran = (scripts: Profiler.ScriptCoverage[]) =>
    scripts
      .filter((script) => script.url.startsWith('file://') && script.functions.some((f) => f.ranges.some((r) => r.count > 0)))
      .map((script) => relative(ROOT, fileURLToPath(script.url)))
      .filter((file) => file.startsWith('src/') && !file.startsWith('src/simulator/'))
      .sort();

  let files: string[];
  it('lists files that exist, each once', () => {
    expect(path.length, 'the bet path has its rows').to.be.greaterThan(20);
    for (const file of [...path, ...beside]) expect(existsSync(`${ROOT}${file}`), file).to.equal(true);
    expect(new Set([...path, ...beside]).size).to.equal(path.length + beside.length);
  });

  it('a winning bet runs every file of the path, and nothing of src/ that is not listed', async () => {
    // the first bet loads what the path loads lazily and warms the caches (the operator's
    // credential, the seed key); the second is the path as every later bet takes it
    await filesOfAWinningBet();
    files = await filesOfAWinningBet();
    expect(path.filter((file) => !files.includes(file)), 'listed on the path, but did not run').to.deep.equal([]);
    expect(files.filter((file) => !path.includes(file) && !beside.includes(file)), 'ran, but is not listed').to.deep.equal([]);
  });
});
