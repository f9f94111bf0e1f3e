import { expect } from 'chai';
import { balancesOf, type BalanceFacts } from '../../src/shared/game/reports/recall.js';

// Game recall (D33): the balance before and after a round, from the wallet's answers as
// received (wallet_calls.response_body), and why none is shown when no answer states it.

const answer = (endpoint: string, status: string | null, body: unknown) => ({
  endpoint,
  status,
  body: body === null ? null : typeof body === 'string' ? body : JSON.stringify(body),
});
const ok = (endpoint: string, balanceMicro: string) => answer(endpoint, 'RS_OK', { status: 'RS_OK', requestUuid: 'x', balanceMicro });
const facts = (overrides: Partial<BalanceFacts>): BalanceFacts => ({
  demo: false,
  state: 'SETTLED',
  rejected: false,
  won: false,
  betSettled: true,
  stakeMicro: 250_000n,
  calls: [ok('bet', '99750000')],
  rollbackDone: null,
  ...overrides,
});
const shown = (micro: string) => ({ micro, gap: null });
const gap = (why: string) => ({ micro: null, gap: why });

describe('recall balances from the wallet answers (D33)', () => {
  it('a lost round: before is the debit answer plus the stake, after the debit answer', () => {
    expect(balancesOf(facts({}))).to.deep.equal({ balanceBefore: shown('100000000'), balanceAfter: shown('99750000') });
  });

  it('a won round: after is the win answer once confirmed, pending before', () => {
    const calls = [ok('bet', '99750000'), answer('win', null, null), ok('win', '100235000')];
    expect(balancesOf(facts({ won: true, calls })).balanceAfter).to.deep.equal(shown('100235000'));
    expect(balancesOf(facts({ won: true, betSettled: false, calls: calls.slice(0, 2) })).balanceAfter).to.deep.equal(gap('pending'));
  });

  it('a voided round: after is the rollback answer, pending while the rollback is retried', () => {
    const calls = [ok('bet', '99750000'), ok('rollback', '100000000')];
    expect(balancesOf(facts({ state: 'VOIDED', won: null, calls, rollbackDone: true })).balanceAfter).to.deep.equal(shown('100000000'));
    expect(balancesOf(facts({ state: 'VOIDED', won: null, calls: calls.slice(0, 1), rollbackDone: false })).balanceAfter).to.deep.equal(gap('pending'));
  });

  it('a round in play has no balance after yet', () => {
    expect(balancesOf(facts({ state: 'BETTING_OPEN', won: null })).balanceAfter).to.deep.equal(gap('in_play'));
  });

  it('says why when no answer states the balance: none readable, or one without a valid balanceMicro', () => {
    // a timeout: the row has no status nor body
    expect(balancesOf(facts({ calls: [answer('bet', 'RS_ERROR_TIMEOUT', null)] })).balanceBefore).to.deep.equal(gap('no_answer'));
    expect(balancesOf(facts({ calls: [answer('bet', 'RS_OK', { status: 'RS_OK' })] })).balanceBefore).to.deep.equal(gap('not_reported'));
    expect(balancesOf(facts({ calls: [answer('bet', 'RS_OK', { balanceMicro: 99.75 })] })).balanceBefore).to.deep.equal(gap('not_reported'));
    expect(balancesOf(facts({ calls: [answer('bet', 'RS_OK', 'not json')] })).balanceBefore).to.deep.equal(gap('not_reported'));
  });

  it('a bet the wallet refused cleanly moved nothing; an uncertain one is reversed by its rollback (D22)', () => {
    const refused = [answer('bet', 'RS_ERROR_NOT_ENOUGH_MONEY', { status: 'RS_ERROR_NOT_ENOUGH_MONEY', balanceMicro: '100000' })];
    expect(balancesOf(facts({ state: 'VOIDED', rejected: true, won: null, calls: refused }))).to.deep.equal({
      balanceBefore: shown('100000'),
      balanceAfter: shown('100000'),
    });
    const uncertain = [answer('bet', 'RS_ERROR_TIMEOUT', null), ok('rollback', '100000000')];
    expect(balancesOf(facts({ state: 'VOIDED', rejected: true, won: null, calls: uncertain, rollbackDone: true }))).to.deep.equal({
      balanceBefore: gap('no_answer'),
      balanceAfter: shown('100000000'),
    });
  });

  it('a free bet took no stake; a demo session has no wallet (D8)', () => {
    expect(balancesOf(facts({ stakeMicro: 0n })).balanceBefore).to.deep.equal(shown('99750000'));
    expect(balancesOf(facts({ demo: true }))).to.deep.equal({ balanceBefore: gap('demo'), balanceAfter: gap('demo') });
  });
});
