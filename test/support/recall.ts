import { expect } from 'chai';
import type { Harness, TestOperator } from './harness.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer, type SeatedPlayer } from './game.js';
import { waitForQuiescence } from './invariants.js';

// Rounds for the recall tests (D33), played through the engine and the wallet simulator: a
// won, a lost and a voided round, each in a session of its own, finished, with the seeds of
// the won and lost rounds revealed (their sessions terminated), so that their proofs check.
// Needs a harness running every role.

export const RECALL_FUNDS = 100_000_000n; // 1,000.00
export const RECALL_STAKE = 250_000n; // 2.50

export type RecallRound = { roundId: string; seat: SeatedPlayer; operator: TestOperator };
export type RecallRounds = { won: RecallRound; lost: RecallRound; voided: RecallRound; payoutMicro: bigint };

// The betting window of a table whose window is long: open, as a round_state (received
// before or after `connected`) or `connected` itself told.
export async function longWindowOpen(seat: SeatedPlayer): Promise<void> {
  const open = (state: { phase?: string } | null | undefined) => state?.phase === 'BETTING_OPEN';
  if (!open(seat.connected.roundState)) await seat.player.waitFor('round_state', open, 20_000);
}

export async function playRecallRounds(h: Harness, frameAncestors: string[] = []): Promise<RecallRounds> {
  // LOW always wins here (D19 weights 1:0): a LOW bet wins and a HIGH bet loses
  const table = await operatorWith(h, { bettingWindowMs: 1500, lowWeight: 1n, highWeight: 0n }, { frameAncestors });
  const winner = await seatPlayer(h, table, RECALL_FUNDS);
  const loser = await seatPlayer(h, table, RECALL_FUNDS);
  await bettingWindowWithRoom(winner.player, 800);
  const [won, lost] = await Promise.all([
    winner.player.request('place_bet', { side: 'LOW', amountMicro: RECALL_STAKE.toString() }),
    loser.player.request('place_bet', { side: 'HIGH', amountMicro: RECALL_STAKE.toString() }),
  ]);
  expect([won.ok, lost.ok], JSON.stringify([won, lost])).to.deep.equal([true, true]);
  const result = await winner.player.waitFor('round_result', (m) => m.roundId === won.roundId, 15_000);
  await loser.player.waitFor('round_result', (m) => m.roundId === lost.roundId, 15_000);

  // a betting window that lasts until the test ends it: the round is voided while open
  const open = await operatorWith(h, { bettingWindowMs: 120_000 }, { frameAncestors });
  const voider = await seatPlayer(h, open, RECALL_FUNDS);
  await longWindowOpen(voider);
  const voided = await voider.player.request('place_bet', { side: 'LOW', amountMicro: RECALL_STAKE.toString() });
  expect(voided.ok, JSON.stringify(voided)).to.equal(true);

  for (const [operator, seat] of [[table, winner], [table, loser], [open, voider]] as const) {
    const ended = await operator.request('POST', `/v1/session/${seat.sessionId}/terminate`, { reason: 'recall test' });
    expect(ended.status, ended.text).to.equal(200);
  }
  await waitForQuiescence(h.svc.db, { operatorIds: [table.operatorId, open.operatorId], timeoutMs: 20_000 });
  for (const seat of [winner, loser, voider]) seat.player.close();
  return {
    won: { roundId: won.roundId, seat: winner, operator: table },
    lost: { roundId: lost.roundId, seat: loser, operator: table },
    voided: { roundId: voided.roundId, seat: voider, operator: open },
    payoutMicro: BigInt(result.payoutMicro),
  };
}
