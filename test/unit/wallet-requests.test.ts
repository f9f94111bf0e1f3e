import { expect } from 'chai';
import { prepareCall } from '../../src/shared/wallet/client.js';
import { balanceRequest, betRequest, rollbackRequest, winRequest } from '../../src/shared/wallet/requests.js';
import { debitCall } from '../../src/shared/game/bets/ticket.js';

// The bodies of the wallet calls (contract 2.5-2.9), field for field and in the order they
// are sent: the body is serialised once and those bytes are signed (D6), so a change of
// order is a change an operator's wallet sees. client.ts puts requestUuid first.

const player = { operatorId: 'op-1', playerRef: 'player-7', currency: 'EUR', gameCode: 'dice' };
const REQUEST_UUID = '00000000-0000-4000-8000-000000000001';
const BET_TX = '11111111-1111-4111-8111-111111111111';
const WIN_TX = '22222222-2222-4222-8222-222222222222';
const ROLLBACK_TX = '33333333-3333-4333-8333-333333333333';
const ROUND = '44444444-4444-4444-8444-444444444444';

// the bytes client.ts signs for these fields (prepareCall, with this requestUuid)
const sent = (fields: object) =>
  prepareCall({ fields: fields as Record<string, unknown> }).bytes.replace(/^\{"requestUuid":"[^"]+"/, `{"requestUuid":"${REQUEST_UUID}"`);

describe('wallet request bodies (contract 2.5-2.9)', () => {
  it('balance: the common fields only (2.9)', () => {
    expect(sent(balanceRequest(player))).to.equal(
      '{"requestUuid":"00000000-0000-4000-8000-000000000001","operatorId":"op-1","playerRef":"player-7","currency":"EUR","gameCode":"dice"}',
    );
  });

  it('bet: the stake, its transaction and round, and isFree only for a free bet (2.6)', () => {
    const bet = { ...player, betTransactionUuid: BET_TX, amountMicro: '2500000', roundId: ROUND };
    expect(sent(betRequest({ ...bet, isFree: false }))).to.equal(
      '{"requestUuid":"00000000-0000-4000-8000-000000000001","operatorId":"op-1","playerRef":"player-7","currency":"EUR","gameCode":"dice",' +
        '"transactionUuid":"11111111-1111-4111-8111-111111111111","amountMicro":"2500000","roundId":"44444444-4444-4444-8444-444444444444"}',
    );
    expect(sent(betRequest({ ...bet, isFree: true }))).to.equal(
      '{"requestUuid":"00000000-0000-4000-8000-000000000001","operatorId":"op-1","playerRef":"player-7","currency":"EUR","gameCode":"dice",' +
        '"transactionUuid":"11111111-1111-4111-8111-111111111111","amountMicro":"2500000","roundId":"44444444-4444-4444-8444-444444444444","isFree":true}',
    );
  });

  it('the debit call of a ticket carries the bet body', () => {
    const ticket = { ...player, sessionId: 'session-1', betTransactionUuid: BET_TX, amountMicro: '2500000', roundId: ROUND, isFree: false };
    const call = debitCall(ticket);
    expect(call).to.deep.include({ operatorId: 'op-1', endpoint: 'bet', sessionId: 'session-1', transactionUuid: BET_TX });
    expect(JSON.stringify(call.fields)).to.equal(JSON.stringify(betRequest(ticket)));
  });

  it('win: its own transaction, the bet\'s as reference, the net amount and the round (2.7)', () => {
    const win = { ...player, winTransactionUuid: WIN_TX, betTransactionUuid: BET_TX, amountMicro: '4850000', roundId: ROUND };
    expect(sent(winRequest(win))).to.equal(
      '{"requestUuid":"00000000-0000-4000-8000-000000000001","operatorId":"op-1","playerRef":"player-7","currency":"EUR","gameCode":"dice",' +
        '"transactionUuid":"22222222-2222-4222-8222-222222222222","referenceTransactionUuid":"11111111-1111-4111-8111-111111111111",' +
        '"amountMicro":"4850000","roundId":"44444444-4444-4444-8444-444444444444"}',
    );
  });

  it('rollback: its own transaction, the bet\'s as reference and the round, no amount (2.8)', () => {
    const bet = { ...player, betTransactionUuid: BET_TX, roundId: ROUND, amountMicro: '2500000', sessionId: 'session-1' };
    expect(sent(rollbackRequest(bet, ROLLBACK_TX))).to.equal(
      '{"requestUuid":"00000000-0000-4000-8000-000000000001","operatorId":"op-1","playerRef":"player-7","currency":"EUR","gameCode":"dice",' +
        '"transactionUuid":"33333333-3333-4333-8333-333333333333","referenceTransactionUuid":"11111111-1111-4111-8111-111111111111",' +
        '"roundId":"44444444-4444-4444-8444-444444444444"}',
    );
  });

  it('client.ts sends requestUuid first, then the fields as built', () => {
    const fields = winRequest({ ...player, winTransactionUuid: WIN_TX, betTransactionUuid: BET_TX, amountMicro: '1', roundId: ROUND });
    const prepared = prepareCall({ fields });
    expect(Object.keys(JSON.parse(prepared.bytes) as object)).to.deep.equal([
      'requestUuid',
      'operatorId',
      'playerRef',
      'currency',
      'gameCode',
      'transactionUuid',
      'referenceTransactionUuid',
      'amountMicro',
      'roundId',
    ]);
  });
});
