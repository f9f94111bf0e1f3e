import { expect } from 'chai';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer, until } from '../../support/game.js';

// D39: GET /v1/games, the catalogue of the calling operator; D46: the stake step its
// configurations carry, which a bet must respect.
describe('the game catalogue: GET /v1/games (D39) and the stake step (D46)', function () {
  this.timeout(60_000);
  let h: Harness;

  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h?.close());

  it("lists dice for every operator, with the defaults' terms and no currency of its own", async () => {
    const operator = await h.onboard();
    const answer = await operator.request('GET', '/v1/games');
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body).to.deep.equal({
      games: [
        {
          gameCode: 'dice',
          kind: 'shared',
          name: 'Dice',
          rngVersion: 'dice-hmac-sha256-v1',
          mathVersion: 'dice-1.0.0',
          rtp: '0.97',
          maxMultiplier: '1.94',
          availableInEveryCurrency: true,
          currencies: [],
          features: [],
        },
      ],
    });
  });

  it("lists each currency the operator configured, with its own terms; another operator's configuration is not seen", async () => {
    const operator = await h.onboard();
    const other = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {}, { payoutMultiplier: '1.98', commissionMicro: '0', stakeStepMicro: '5000', minBetMicro: '10000' });
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'JPY', {}, { minBetMicro: '100000', maxBetMicro: '1000000000' });
    await setGameConfig(h.svc.db, other.operatorId, 'dice', 'USD', {}, {});
    const answer = await operator.request('GET', '/v1/games');
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.games[0].currencies).to.deep.equal([
      { currency: 'EUR', minBetMicro: '10000', maxBetMicro: '100000000', stakeStepMicro: '5000', rtp: '0.99', maxMultiplier: '1.98' },
      // D46: the stake step defaults to the currency's minor unit (no decimals in JPY)
      { currency: 'JPY', minBetMicro: '100000', maxBetMicro: '1000000000', stakeStepMicro: '100000', rtp: '0.97', maxMultiplier: '1.94' },
    ]);
  });

  it('lists crash once the operator configured it for a currency (D39, D40), and a session of it may then be launched', async () => {
    const operator = await h.onboard();
    const launchCrash = () => operator.request('POST', '/v1/session', operator.sessionBody({ gameCode: 'crash', mode: 'demo' }));
    expect((await launchCrash()).body).to.include({ error: 'game_not_available' });
    await setGameConfig(h.svc.db, operator.operatorId, 'crash', 'EUR', {}, { maxMultiplier: '500.00' });
    const answer = await operator.request('GET', '/v1/games');
    expect(answer.body.games.map((game: { gameCode: string }) => game.gameCode)).to.deep.equal(['dice', 'crash']);
    expect(answer.body.games[1]).to.deep.equal({
      gameCode: 'crash',
      kind: 'shared',
      name: 'Crash',
      rngVersion: 'crash-hmac-sha256-v1',
      mathVersion: 'crash-1.0.0',
      rtp: '0.97',
      maxMultiplier: '1000.00',
      availableInEveryCurrency: false,
      currencies: [{ currency: 'EUR', minBetMicro: '10000', maxBetMicro: '100000000', stakeStepMicro: '1000', rtp: '0.97', maxMultiplier: '500.00' }],
      features: ['auto_cash_out'],
    });
    const launched = await launchCrash();
    expect(launched.status, launched.text).to.equal(200);
    // another currency is still not configured
    const usd = await operator.request('POST', '/v1/session', operator.sessionBody({ gameCode: 'crash', currency: 'USD', mode: 'demo' }));
    expect(usd.body).to.include({ error: 'game_not_available' });
  });

  it('is refused without a valid signature', async () => {
    const operator = await h.onboard();
    const answer = await operator.request('GET', '/v1/games', undefined, { signature: 'not-a-signature' });
    expect(answer.status, answer.text).to.equal(401);
  });

  it('D46: a stake that is not a multiple of the stake step is bet_out_of_range, and moves no money', async () => {
    const operator = await operatorWith(h, {}, {});
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {}, { stakeStepMicro: '1000' });
    const seated = await seatPlayer(h, operator, 10_000_000n);
    expect(seated.connected.config.stakeStepMicro).to.equal('1000');
    await bettingWindowWithRoom(seated.player, 500);
    const refused = await seated.player.request('place_bet', { side: 'LOW', amountMicro: '1000500' });
    expect(refused).to.deep.include({ ok: false, reason: 'bet_out_of_range' });
    expect(h.wallet.requests.filter((request) => (request.body as { playerRef?: string }).playerRef === seated.playerRef && request.endpoint === 'bet')).to.deep.equal([]);
    const accepted = await seated.player.request('place_bet', { side: 'LOW', amountMicro: '1001000' });
    expect(accepted, JSON.stringify(accepted)).to.deep.include({ ok: true });
    seated.player.close();
  });

  it("D46: payoutRounding minor_unit pays a win rounded down to the currency's minor unit; exact pays every micro-unit", async () => {
    const paid = async (payoutRounding: string) => {
      // LOW always wins (weights 1:0, D2); 1.01 EUR at 2x less 3% is 1.95940 EUR
      const operator = await operatorWith(h, { lowWeight: 1n, highWeight: 0n });
      await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {}, { payoutRounding });
      const seated = await seatPlayer(h, operator, 10_000_000n);
      await bettingWindowWithRoom(seated.player, 500);
      const ack = await seated.player.request('place_bet', { side: 'LOW', amountMicro: '101000' });
      expect(ack.ok, JSON.stringify(ack)).to.equal(true);
      const result = await seated.player.waitFor('round_result', (p) => p.roundId === ack.roundId, 15_000);
      await until('the win', async () => h.wallet.transactions.some((t) => t.playerRef === seated.playerRef && t.type === 'win'));
      seated.player.close();
      const wins = h.wallet.transactions.filter((t) => t.playerRef === seated.playerRef && t.type === 'win').map((t) => t.amountMicro);
      return { told: result.payoutMicro, wins };
    };
    expect(await paid('minor_unit')).to.deep.equal({ told: '195000', wins: [195_000n] });
    expect(await paid('exact')).to.deep.equal({ told: '195940', wins: [195_940n] });
  });
});
