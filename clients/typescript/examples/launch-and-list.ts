// Launch a session and list the last hour's rounds with the typed client.
//
//   npm run demo        # prints RGS_URL=… RGS_OPERATOR_ID=… RGS_KEY_ID=… RGS_API_SECRET=…
//   RGS_URL=… RGS_OPERATOR_ID=… RGS_KEY_ID=… RGS_API_SECRET=… \
//     node --import tsx clients/typescript/examples/launch-and-list.ts [playerRef] [demo|real]
//
// A demo-mode session (the default) never calls the operator's wallet (D8); `real` asks the
// wallet for the player's balance first (in the demo: playerRef demo-player).
// From an installed package, import from '@rgs/operator-client' instead.
import { randomUUID } from 'node:crypto';
import { createOperatorClient } from '../index.js';

const { RGS_URL, RGS_OPERATOR_ID, RGS_KEY_ID, RGS_API_SECRET } = process.env;
if (!RGS_URL || !RGS_OPERATOR_ID || !RGS_KEY_ID || !RGS_API_SECRET) {
  console.error('set RGS_URL, RGS_OPERATOR_ID, RGS_KEY_ID and RGS_API_SECRET (npm run demo prints them)');
  process.exit(2);
}
const [playerRef = 'player-1001', mode = 'demo'] = process.argv.slice(2);
if (mode !== 'demo' && mode !== 'real') {
  console.error(`mode is demo or real, not ${mode}`);
  process.exit(2);
}

const rgs = createOperatorClient({ baseUrl: RGS_URL, keyId: RGS_KEY_ID, secret: RGS_API_SECRET });

// always a requestUuid, so that a retry cannot make a second session (D17)
const launched = await rgs.POST('/v1/session', {
  body: { operatorId: RGS_OPERATOR_ID, playerRef, gameCode: 'dice', currency: 'EUR', lang: 'en', jurisdiction: 'MT', mode, requestUuid: randomUUID() },
});
if (launched.error) {
  console.error(`launch refused: ${launched.response.status} ${launched.error.error}: ${launched.error.message}`);
  process.exit(1);
}
console.log(`session ${launched.data.sessionId}`);
console.log(`launch URL ${launched.data.launchUrl}`);

// one page of the rounds finished in the last hour (demo rounds are never listed, D8)
const from = new Date(Date.now() - 60 * 60 * 1000).toISOString();
const listed = await rgs.GET('/v1/rounds', { params: { query: { from, limit: '100' } } });
if (listed.error) {
  console.error(`listing refused: ${listed.response.status} ${listed.error.error}: ${listed.error.message}`);
  process.exit(1);
}
console.log(`rounds ${listed.data.rounds.length}${listed.data.nextCursor ? ' (more: pass nextCursor as cursor)' : ''}`);
for (const round of listed.data.rounds) {
  console.log(`round ${round.roundId} ${round.state} bets ${round.totalBetsMicro} payouts ${round.totalPayoutsMicro} ${round.currency}`);
}
