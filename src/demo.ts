import { startRoles } from './roles.js';
import { closeServiceContext, createServiceContext } from './bootstrap.js';
import { loadConfig } from './shared/platform/config.js';
import { migrate } from './shared/platform/db/migrate.js';
import { rotateCredential } from './shared/wallet/credentials.js';
import { createOperator, updateOperator } from './shared/game/operators/operators.js';
import { signedHeaders } from './shared/wallet/signer.js';
import { WalletSimulator } from './simulator/wallet-simulator.js';
import { LAUNCHABLE_GAME_CODES, availableToEveryOperator, isKnownGame } from './shared/domain/games/index.js';
import { setGameConfig } from './shared/game/operators/game-config.js';

// `npm run demo`: every role in one process, a built-in demo operator whose wallet
// is the project's wallet simulator with a funded player, and a launch URL to open. Rounds
// run with the default windows of contract 2.12. The session goes through the real signed
// API and the real wallet path (mode real), exactly as an operator's would.

const OPERATOR_ID = 'demo-casino';
const PLAYER = 'demo-player';
const CURRENCY = 'EUR';
const START_BALANCE_MICRO = 100_000_000n; // 1,000.00

async function main(): Promise<void> {
  // logs for a person at a terminal, unless LOG_FORMAT says otherwise
  const config = loadConfig({ LOG_FORMAT: 'pretty', ...process.env });
  await migrate(config.databaseUrl, undefined, { masterKey: config.masterKey });
  const wallet = await WalletSimulator.start({ port: Number(process.env.DEMO_WALLET_PORT ?? config.port + 1) });
  const svc = await createServiceContext(config);
  const roles = await startRoles(svc, config);
  const { url } = roles;

  // secrets are shown once, so each start mints fresh ones for the built-in operator
  const existing = await svc.db.operator.findUnique({ where: { id: OPERATOR_ID } });
  let apiKey: { kid: string; secret: string };
  if (existing) {
    await updateOperator(svc.db, OPERATOR_ID, { walletUrl: wallet.url, suspended: false });
    const api = await rotateCredential(svc.db, config.masterKey, OPERATOR_ID, 'API');
    const walletKey = await rotateCredential(svc.db, config.masterKey, OPERATOR_ID, 'WALLET');
    apiKey = { kid: api.kid, secret: api.secret };
    wallet.addCredential(walletKey.kid, walletKey.secret);
  } else {
    const created = await createOperator(svc.db, config.masterKey, OPERATOR_ID, { walletUrl: wallet.url, currencies: [CURRENCY] });
    apiKey = { kid: created.apiKeyId, secret: created.apiSecret };
    wallet.addCredential(created.walletKeyId, created.walletSignatureSecret);
  }
  wallet.setBalance(PLAYER, CURRENCY, START_BALANCE_MICRO);
  // DEMO_GAME: any game of the catalogue (D39); one that not every operator has is configured
  // for the demo operator with its defaults, which makes it available
  const gameCode = process.env.DEMO_GAME ?? 'dice';
  if (!isKnownGame(gameCode)) throw new Error(`DEMO_GAME must be one of ${LAUNCHABLE_GAME_CODES.join(', ')}: got ${gameCode}`);
  if (!availableToEveryOperator(gameCode)) await setGameConfig(svc.db, OPERATOR_ID, gameCode, CURRENCY, {});

  const body = JSON.stringify({
    operatorId: OPERATOR_ID,
    playerRef: PLAYER,
    gameCode,
    currency: CURRENCY,
    lang: process.env.DEMO_LANG ?? 'en',
    jurisdiction: 'MT',
    // contract 2.2: where the page's exit leads; without it the page offers none
    ...(process.env.DEMO_RETURN_URL ? { returnUrl: process.env.DEMO_RETURN_URL } : {}),
  });
  const launch = () =>
    fetch(`${url}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signedHeaders(apiKey.kid, apiKey.secret, 'POST', '/v1/session', body) },
      body,
    });
  let response = await launch();
  // D37: a process that has just started (and onboarded the demo operator on its own loop)
  // may answer service_busy; like any operator, the demo waits Retry-After and asks again
  for (let attempt = 1; response.status === 503 && response.headers.has('retry-after') && attempt < 5; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after')) * 1000));
    response = await launch();
  }
  const session = (await response.json()) as { launchUrl?: string; error?: string; message?: string };
  if (!response.ok || !session.launchUrl) throw new Error(`launching the demo session failed: ${session.error}: ${session.message}`);

  process.stdout.write(
    `\nRGS demo is running (${gameCode}).\n  player ${PLAYER} holds 1,000.00 ${CURRENCY} in the wallet simulator at ${wallet.url}\n` +
      `  open this launch URL in a browser (valid 60 minutes):\n\n  ${session.launchUrl}\n\n` +
      // the operator's API credential, minted afresh at each start, for the client examples
      // (docs/clients.md); a demo's secret, on the terminal of whoever started it
      `  ${OPERATOR_ID}'s API credential, for the client examples (docs/clients.md):\n\n` +
      `  RGS_URL=${url} RGS_OPERATOR_ID=${OPERATOR_ID} RGS_KEY_ID=${apiKey.kid} RGS_API_SECRET=${apiKey.secret}\n\nCtrl-C stops it.\n`,
  );

  const stop = async () => {
    await roles.close();
    await closeServiceContext(svc);
    await wallet.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((err: unknown) => {
  process.stderr.write(`demo failed: ${(err as Error).message}\n`);
  process.exit(1);
});
