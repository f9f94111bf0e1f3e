import { expect } from 'chai';
import { params } from '../../src/shared/platform/db/sql.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { completeIdempotencySql, completionParams, IDEMPOTENCY_PARAM_COUNT } from '../../src/shared/platform/idempotency.js';
import { AUDIT_PARAM_COUNT, completeAuditsSql } from '../../src/shared/wallet/audit.js';

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });

// A statement's parameters are declared in the order the caller passes their values
// (params(), src/shared/platform/db/sql.ts, P3), so that no `$n` in a text is computed by hand.

describe('statement parameters declared in order (P3)', () => {
  it('numbers each parameter after the ones declared before it, blocks included', () => {
    const p = params();
    expect([p.one(), p.one()]).to.deep.equal(['$1', '$2']);
    expect(p.many(3)).to.deep.equal(['$3', '$4', '$5']);
    expect(p.one()).to.equal('$6');
  });

  it('the audit completion reads the block it is given', () => {
    const p = params();
    p.one();
    p.one();
    expect(completeAuditsSql(p.many(AUDIT_PARAM_COUNT))).to.include('unnest($3::uuid[], $4::int[]').and.include('BETWEEN $11::timestamptz AND $12::timestamptz');
  });

  it("the idempotency key's completion reads the block it is given, in completionParams' order", () => {
    const p = params();
    p.one();
    const text = completeIdempotencySql(p.many(IDEMPOTENCY_PARAM_COUNT));
    expect(text).to.include('response_status = $5::int, response_body = $6::jsonb');
    expect(text).to.include('operator_id = $2::text AND request_uuid = $3::uuid AND endpoint = $4::text');
    expect(completionParams({ key: ['op', 'uuid', 'session'], completed: false }, 200, { a: 1 })).to.deep.equal(['op', 'uuid', 'session', 200, '{"a":1}']);
  });

  it('no statement of the service numbers a parameter by arithmetic', () => {
    // a `$${n + k}` in a text is a number computed by hand: declare the parameters instead
    // (params() itself, which counts them, is the one place that may)
    const offenders = sourceFiles('src')
      .filter((file) => !file.endsWith(join('db', 'sql.ts')))
      .filter((file) => /\$\$\{[^}]*[+-]/.test(readFileSync(file, 'utf8')));
    expect(offenders).to.deep.equal([]);
  });

  it('refuses a block of the wrong size', () => {
    expect(() => completeAuditsSql(params().many(AUDIT_PARAM_COUNT - 1))).to.throw(`the audit completion takes ${AUDIT_PARAM_COUNT} parameters`);
    expect(() => completeIdempotencySql(params().many(IDEMPOTENCY_PARAM_COUNT + 1))).to.throw(`the key's completion takes ${IDEMPOTENCY_PARAM_COUNT} parameters`);
  });
});
