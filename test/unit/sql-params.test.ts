import { expect } from 'chai';
import { params } from '../../src/platform/db/sql.js';
import { AUDIT_PARAM_COUNT, completeAuditsSql } from '../../src/wallet/audit.js';

// A statement's parameters are declared in the order the caller passes their values
// (params(), src/platform/db/sql.ts, P3), so that no `$n` in a text is computed by hand.

describe('statement parameters declared in order (P3)', () => {
  it('numbers each parameter after the ones declared before it, blocks included', () => {
    const p = params();
    expect([p.one(), p.one()]).to.deep.equal(['$1', '$2']);
    expect(p.many(3)).to.deep.equal(['$3', '$4', '$5']);
    expect(p.one()).to.equal('$6');
  });

  it('the audit completion reads the block it is given, as it reads the block from a first number', () => {
    const p = params();
    p.one();
    p.one();
    expect(completeAuditsSql(p.many(AUDIT_PARAM_COUNT))).to.equal(completeAuditsSql(3));
    expect(completeAuditsSql(3)).to.include('unnest($3::uuid[], $4::int[]').and.include('BETWEEN $11::timestamptz AND $12::timestamptz');
  });

  it('refuses an audit block of the wrong size', () => {
    expect(() => completeAuditsSql(params().many(AUDIT_PARAM_COUNT - 1))).to.throw(`the audit completion takes ${AUDIT_PARAM_COUNT} parameters`);
  });
});
