import { expect } from 'chai';
import { uniqueId, type Harness, type TestOperator } from './harness.js';

// D42: a free-bet campaign made through the signed API, as an operator makes one: dice in
// EUR for a week unless the terms say otherwise, a campaignRef of its own unless named; its
// grants by playerRef
export async function createCampaign(
  h: Pick<Harness, 'svc'>,
  operator: TestOperator,
  terms: { playerRefs: string[]; stakeMicro: bigint; rounds: number } & Record<string, unknown>,
): Promise<{ campaignRef: string; campaignId: string; grantOf: Map<string, string> }> {
  const { stakeMicro, ...rest } = terms;
  const body = {
    campaignRef: uniqueId('camp').replace(/[^A-Za-z0-9._:-]/g, '-'),
    gameCode: 'dice',
    currency: 'EUR',
    stakeMicro: stakeMicro.toString(),
    expiresAt: new Date(h.svc.now().getTime() + 7 * 24 * 60 * 60_000).toISOString(),
    ...rest,
  };
  const created = await operator.request('POST', '/v1/freebets', body);
  expect(created.status, created.text).to.equal(201);
  const campaignId = created.body.campaignId as string;
  const grants = await h.svc.db.freeBetGrant.findMany({ where: { campaignId } });
  return { campaignRef: body.campaignRef as string, campaignId, grantOf: new Map(grants.map((g) => [g.playerRef, g.id])) };
}
