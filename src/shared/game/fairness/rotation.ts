import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { openServerSeed, sealServerSeed } from './seed-vault.js';
import type { SeedRotation } from '../../domain/player-channel.js';
import { generateClientSeed, generateServerSeed, serverSeedHash } from '../../domain/seeds.js';

// D5 seed rotation: retire the current seed (revealable from now on), commit to a new one
// and restart the nonce at 0. Refused while the session has an unsettled round or a bet
// being debited (D4), so a round's seed can never change under it.

export type Rotation = SeedRotation | { ok: false; reason: 'bet_in_progress' | 'session_not_found' };

export async function rotateSeed(svc: ServiceContext, sessionId: string, clientSeed: string | undefined): Promise<Rotation> {
  const now = svc.now();
  return svc.db.$transaction(async (tx) => {
    const [current] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM seeds WHERE session_id = ${sessionId}::uuid AND current FOR UPDATE`;
    if (!current) return { ok: false, reason: 'session_not_found' } as const;
    // D4: refused while the session has an unsettled round, or a bet whose debit is still
    // in flight (accepting it creates a round under the current seed). A settled round whose
    // win credit is still with the wallet (bet ACCEPTED, possibly retrying for hours) has
    // its outcome fixed and does not hold the seed.
    const inFlight = await tx.bet.count({ where: { sessionId, status: 'PENDING' } });
    const unsettled = await tx.round.count({ where: { sessionId, settled: false } });
    if (inFlight + unsettled > 0) return { ok: false, reason: 'bet_in_progress' } as const;
    const previous = await tx.seed.update({ where: { id: current.id }, data: { current: false, retiredAt: now } });
    const id = randomUUID();
    const serverSeed = generateServerSeed();
    const next = await tx.seed.create({
      data: {
        id,
        sessionId,
        encryptedServerSeed: sealServerSeed(svc.config.masterKey, id, serverSeed),
        serverSeedHash: serverSeedHash(serverSeed),
        clientSeed: clientSeed ?? generateClientSeed(),
        createdAt: now,
      },
    });
    return {
      ok: true,
      previousServerSeed: openServerSeed(svc.config.masterKey, previous.id, previous.encryptedServerSeed),
      previousServerSeedHash: previous.serverSeedHash,
      previousClientSeed: previous.clientSeed,
      lastNonce: previous.nextNonce > 0 ? previous.nextNonce - 1 : null,
      serverSeedHash: next.serverSeedHash,
      clientSeed: next.clientSeed,
    } as const;
  });
}
