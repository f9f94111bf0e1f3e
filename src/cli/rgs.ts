import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { text } from 'node:stream/consumers';
import { Command, CommanderError, Option } from 'commander';
import { isDevelopmentMasterKey, loadConfig, parseMasterKey, type Config } from '../platform/config.js';
import { createDatabase, type Database } from '../platform/db/client.js';
import { migrate } from '../platform/db/migrate.js';
import { verifyDiceProof } from '../domain/proof.js';
import { addPublicKeyCredential, rotateCredential, revokeCredential } from '../wallet/credentials.js';
import {
  describeGameConfig,
  loadGameConfig,
  parseMultiplier,
  setGameConfig,
  type GameConfigValues,
} from '../game/operators/game-config.js';
import { createOperator, describeOperator, updateOperator, type OperatorSettings } from '../game/operators/operators.js';
import { parseRgMaxSpec } from '../domain/rg-limits.js';
import { EVENT_TYPES } from '../domain/events.js';
import { disableWebhookEndpoint, setWebhookEndpoint, showWebhookEndpoint } from '../game/webhooks/endpoints.js';
import { listOperators, operatorTable } from './operator-list.js';
import { rewrapMasterKey } from './master-key.js';
import { VerifyPackUsageError, verifyPackFile } from './verify-pack.js';
import { WALLET_CHECK_DEFAULTS, WalletCheckUsageError, runWalletCheck, walletCheckOptions, walletCheckTable } from './wallet-check.js';
import { PACK_KEY, TOKEN_KEY, revokeSigningKey, rotateSigningKey } from '../platform/signing-keys.js';
import { DEFAULT_MONTHS_AHEAD, applyRetention, archiveMonth, ensurePartitions } from '../platform/db/partitions.js';
import { createLogger } from '../platform/logger.js';
import { ReconcileError, reconcileWalletJob } from '../game/wallet-jobs/reconciliation.js';
import { isMonth, parseRetentionAge } from '../domain/months.js';

// `rgs`, the operator administration tool (DECISIONS D11): JSON on stdout (`operator list`
// lays out a table unless --json); a failed command prints a JSON error on stderr and exits
// 1. A command line that is not understood (an unknown command or option, a missing or
// malformed value) is for the person typing it: one readable line and a hint on stderr,
// exit 2. `--help` (or `-h`) on the tool, a group or a command prints its usage on stdout.
//
// Parsing is commander's: it gives every command and group its --help, refuses unknown
// commands, options and surplus arguments, and suggests the near miss ("did you mean").

export class UsageError extends Error {
  override name = 'UsageError';
}

// an answer that is printed on stdout like any other, but exits 1 (an invalid proof)
class FailedAnswer {
  constructor(readonly answer: unknown) {}
}

// an answer laid out for a person (a table), printed as it is; failed: exit 1
class TextAnswer {
  constructor(
    readonly text: string,
    readonly failed = false,
  ) {}
}

type Values = Record<string, string | boolean | string[] | undefined>;
type Run = (values: Values, database: () => Database) => Promise<unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];
const TRUE_FALSE = ['true', 'false'];

// the settings of `operator create` and `operator update` (contract 5.3, 5.4, D7, D16, D25)
function operatorOptions(command: Command): Command {
  return command
    .option('--currency <codes>', 'currencies the operator may launch sessions in, comma-separated (none: any)')
    .option('--ip-allow <cidrs>', 'IPs or CIDRs its signed requests may come from, comma-separated (none: any)')
    .option('--jurisdictions-blocked <codes>', 'jurisdictions whose launches are refused, comma-separated')
    .option('--frame-ancestors <origins>', 'origins that may frame the game page, comma-separated (scheme://host[:port])')
    .option('--rg-max <spec>', 'responsible-gambling maxima of a jurisdiction; repeatable', collect)
    .option('--signature-window-seconds <n>', 'accepted clock skew of signed requests, 1 to 300 (default 30)')
    .addOption(
      new Option('--wallet-url-private-allowed <bool>', 'with NODE_ENV=production, let the wallet URL resolve to a private address').choices(
        TRUE_FALSE,
      ),
    )
    .addOption(new Option('--sandbox <bool>', 'a sandbox operator: ten times the rate limits, launches may fix their seeds (D35)').choices(TRUE_FALSE));
}

function gameOptions(command: Command): Command {
  return command
    .requiredOption('--operator <id>', 'the operator')
    .requiredOption('--game <code>', 'the game (dice)')
    .requiredOption('--currency <code>', 'the currency');
}

const OPERATOR_NOTES = `
--rg-max takes JUR:field=N[,field=N...] with the fields sessionTimeSeconds, dailyLossMicro
and dailyWagerMicro; a listed field becomes required at launch in that jurisdiction.
With NODE_ENV=production the wallet URL must be https:, carry no credentials and resolve to
a public address (unless --wallet-url-private-allowed true).
--sandbox true makes a test tenant (docs/sandbox.md): refused with NODE_ENV=production unless
SANDBOX_ENABLED=true, since its launches may choose their seeds.`;

const WEBHOOK_NOTES = `
Event types: ${EVENT_TYPES.join(', ')}. A webhook.test event (POST /v1/webhooks/test) is
sent whatever --events says. Every request is signed with the operator's current wallet
credential, like a wallet call (D6, D31). The URL follows the wallet URL's rules: with
NODE_ENV=production it must be https:, carry no credentials and resolve to a public address
(unless --url-private-allowed true). Options left out of a new set take their default.`;

const SEALING_NOTE = `
The new secrets are sealed under MASTER_KEY. Without it the development key published with
the source is used and a warning is printed on stderr; with NODE_ENV=production that is
refused.`;

const REWRAP_HELP = `
Re-encrypts everything sealed under MASTER_KEY with the key in NEW_MASTER_KEY, in one
transaction: every credential's data key (the secrets the operators hold do not change)
and every server seed (their commitments do not change). The new key is read from the
environment only, never from a flag, so that it stays out of the process list and the shell
history. It is 32 bytes as 64 hex characters or base64, like MASTER_KEY.

Stop every rgs process first: they seal new seeds under the key they started with. Then
start them with MASTER_KEY set to the new key.

If any row opens neither under MASTER_KEY nor under NEW_MASTER_KEY, nothing is changed and
the error names the rows. A row already under NEW_MASTER_KEY is left as it is, so running it
again is safe and re-encrypts only what is still under the old key.

Without MASTER_KEY (never with NODE_ENV=production, where it is required) the old key is
the development key, which is how secrets sealed under it are moved to a real one. A
development key as NEW_MASTER_KEY is refused with NODE_ENV=production and warned about
otherwise.

Prints {credentials: {rewrapped, alreadyUnderNewKey, revokedSkipped}, seeds: {rewrapped,
alreadyUnderNewKey}}.

Example:
  MASTER_KEY=<current key> NEW_MASTER_KEY=<new key> rgs master-key rewrap`;

const VERIFY_PACK_HELP = `
--keys is required: a pack does not say which service made it, and keys it carried itself
would prove nothing. Give the service's GET /v1/keys URL, or a copy of it saved earlier to
verify with no network at all. Exit 0: every check holds; 1: a check failed (its name and
detail are in the report); 2: the file or the keys could not be read.

Example:
  curl -s https://rgs.example.com/v1/keys > keys.json
  rgs verify-pack dispute-pack-<roundId>.zip --keys keys.json`;

const WALLET_CHECK_HELP = `
Calls the wallet as the service would (contract 4.2, 4.3, 5.1, D27), with the wallet
credential the operator's wallet knows (its walletKeyId and walletSignatureSecret), and puts
--operator in every body. It needs no database. Use a test player with a balance of at least
30000 micro-units and no other activity: the check moves stakes of 10000, gives every one
back (a win or a rollback), and judges each call by the balance before and after it. One
bet is the balance plus one micro-unit, which the wallet must refuse; if it books it, it is
rolled back at once. Checks: signature-refused, bet-idempotent-request,
bet-duplicate-transaction, win-with-reference, rollback-known, rollback-unknown,
debit-after-rollback, not-enough-money, amounts-as-strings, request-uuid-echo,
balance-restored (docs/wallet-api.md, "Wallet conformance check"). Latency is shown against
contract 8.5, not judged. Exit 0: every check passed; 1: one failed; 2: the command line.

Example:
  rgs wallet-check --url https://wallet.staging.example.com --kid <walletKeyId> \
    --secret <walletSignatureSecret> --operator op1 --player test-player-1 --currency EUR`;

const CREDENTIAL_ADD_HELP = `
The operator signs the canonical string of contract 5.1 with its private key and sends its
base64 in X-Rgs-Signature, with X-Rgs-Key-Id set to the kid printed here. The credential
accepts signatures of its algorithm only. With --jwks-url any key of the set usable for the
algorithm verifies; the URL follows the wallet URL's rules (https: and a public address in
production, unless the operator has --wallet-url-private-allowed true). Prints {kind, kid,
alg, notBefore, previousKid, previousNotAfter}.

Example:
  rgs credential add --operator casino-1 --kind api --alg EdDSA --public-key-file casino-1.pub.pem`;

const ARCHIVE_HELP = `
The file is created, never replaced: an existing --out is refused and left as it is. Once
written it is read back (sha256 of its bytes, rows per table) and recorded in the database;
retention drops a month only with such a record whose rows still match the month and that
was taken when nothing in it was unfinished. Prints {rgsArchive, month, tables, createdAt,
file, sha256, counts, openWork, verifiedAt}.
`;

const RETENTION_HELP = `
A month is kept, and named under "kept" with the reason, while it holds unfinished money
work (a bet in play, a round not settled, a stake held, a wallet job open, or abandoned and
not yet recorded by rgs jobs reconcile, a webhook event pending), and while it has no
verified archive of rgs archive that matches it. --without-archive drops such finished
months anyway and logs each at warn on stderr. The check and the drop are one transaction
that locks the tables: writes to them wait for the moment it takes.
`;

const TOKEN_KEY_HELP = `
Session tokens are signed with this key when SESSION_TOKEN_ALG is RS256 or EdDSA (the new
key is of that algorithm; EdDSA while it is HS256). Tokens made from now on name the new
kid; the old key stays published at GET /.well-known/jwks.json and keeps verifying for 60
minutes, the longest a session token lives. Prints {purpose, kid, algorithm, retiredKid,
retiredAt}.
`;

const REVOKE_HELP = `
Revoke a key you believe leaked (a leaked MASTER_KEY together with a database copy). Whoever
holds it can sign a pack with any date, so a verifier refuses every pack it signed, even one
made before; the key stays listed at GET /v1/keys with its revokedAt so the refusal says why.
Ask for the packs you still need again: they are signed by the current key. Revoking the
current key makes a new current key in the same transaction. Prints {purpose, revokedKid,
revokedAt, retiredAt, kid}, kid being the new current key (null when the revoked key was
not current).
`;

const TOOL_HELP = `
Output: JSON on stdout (operator list: a table unless --json). A command that fails prints a
JSON error {error, message} on stderr and exits 1; a command line that is not understood
prints one line and a hint on stderr and exits 2.

Environment: DATABASE_URL; MASTER_KEY, which seals credentials, server seeds and the pack
signing key (without it the development key is used, with a warning; refused with
NODE_ENV=production); NODE_ENV; NEW_MASTER_KEY for master-key rewrap. Run 'rgs COMMAND --help' for a command's options.`;

function buildProgram(answer: (result: unknown) => void): Command {
  const program = new Command('rgs')
    .description('Operator administration of the remote gaming server')
    .addHelpText('after', TOOL_HELP);

  // the command's options by their flag names (--wallet-url: 'wallet-url'), and its
  // arguments by their names
  const valuesOf = (command: Command): Values => ({
    ...Object.fromEntries(command.options.map((option) => [option.long!.slice(2), command.getOptionValue(option.attributeName()) as Values[string]])),
    ...Object.fromEntries(command.registeredArguments.map((argument, i) => [argument.name(), command.processedArgs[i] as Values[string]])),
  });

  let database: Database | undefined;
  const action = (command: Command, run: Run): Command =>
    // commander passes the command's arguments first, then its options, then the command
    command.action(async (...parameters: unknown[]) => {
      const self = parameters.at(-1) as Command;
      try {
        answer(await run(valuesOf(self), () => (database ??= createDatabase(loadConfig().databaseUrl, 2))));
      } catch (err) {
        if (err instanceof UsageError) self.error(err.message, { exitCode: 2, code: 'rgs.usage' });
        throw err;
      } finally {
        await database?.close();
      }
    });

  // D38: the service's own signing keys exist from here on, sealed under MASTER_KEY
  action(
    program
      .command('migrate')
      .description('create the database if it is missing, apply the migrations, and make the pack and token signing keys if there are none'),
    () => {
      const config = loadConfig();
      const tokenKeyAlg = config.sessionTokenAlg === 'HS256' ? undefined : config.sessionTokenAlg;
      return migrate(config.databaseUrl, undefined, { masterKey: config.masterKey, tokenKeyAlg });
    },
  );

  const operator = program.command('operator').description('onboard, change and list operators');
  action(
    operatorOptions(
      operator
        .command('create')
        .description('onboard an operator; prints its two secrets, once')
        .requiredOption('--id <id>', 'the operator id: 1 to 64 of A-Z a-z 0-9 _ . -')
        .requiredOption('--wallet-url <url>', "base URL of the operator's wallet"),
    ).addHelpText('after', OPERATOR_NOTES + '\n' + SEALING_NOTE),
    (values, database) => {
      const id = required(values, 'id');
      const settings = { ...operatorSettings(values), walletUrl: required(values, 'wallet-url') };
      return sealing((masterKey, production) =>
        createOperator(database().db, masterKey, id, settings, { production, sandboxEnabled: loadConfig().sandboxEnabled }),
      );
    },
  );
  action(
    operatorOptions(
      operator
        .command('update')
        .description("change an operator's settings; options left out keep their value")
        .requiredOption('--id <id>', 'the operator')
        .option('--wallet-url <url>', "base URL of the operator's wallet"),
    )
      .addOption(new Option('--suspended <bool>', 'refuse (true) or allow again (false) its launches').choices(TRUE_FALSE))
      .addHelpText('after', OPERATOR_NOTES),
    (values, database) => {
      const config = loadConfig();
      return updateOperator(database().db, required(values, 'id'), operatorSettings(values), {
        production: config.nodeEnv === 'production',
        sandboxEnabled: config.sandboxEnabled,
      });
    },
  );
  action(operator.command('show').description("print an operator's settings").requiredOption('--id <id>', 'the operator'), async (values, database) => {
    const found = await database().db.operator.findUnique({ where: { id: required(values, 'id') } });
    if (!found) throw new Error(`operator ${String(values.id)} does not exist`);
    return describeOperator(found);
  });
  action(
    operator
      .command('list')
      .description('every operator with its status, wallet URL and credentials (kids and validity, never a secret)')
      .option('--json', 'print JSON instead of the table'),
    async (values, database) => {
      const operators = await listOperators(database().db, new Date());
      return values.json ? { operators } : new TextAnswer(operatorTable(operators));
    },
  );

  const game = program.command('game').description("a game's configuration per operator and currency");
  action(
    gameOptions(game.command('config').description('change the configuration; prints it merged with the defaults'))
      .option('--betting-window-ms <n>', 'how long betting is open')
      .option('--rolling-window-ms <n>', 'how long the dice roll')
      .option('--cooldown-ms <n>', 'pause between rounds')
      .option('--min-bet-micro <n>', 'smallest bet in micro-units (1 = 0.000001)')
      .option('--max-bet-micro <n>', 'largest bet in micro-units')
      .option('--commission-micro <n>', 'commission, 0 to 100000 (0% to 100%)')
      .option('--payout-multiplier <x>', 'payout multiplier, at most 5 decimals (1.98)')
      .option('--low-weight <n>', 'weight of LOW')
      .option('--high-weight <n>', 'weight of HIGH')
      .addHelpText('after', '\nOptions left out keep their stored value, or the default.'),
    (values, database) =>
      setGameConfig(database().db, required(values, 'operator'), required(values, 'game'), required(values, 'currency'), gameConfigChanges(values)),
  );
  action(gameOptions(game.command('show').description('print the configuration in force')), async (values, database) => {
    const [operatorId, gameCode, currency] = [required(values, 'operator'), required(values, 'game'), required(values, 'currency')];
    return describeGameConfig(operatorId, gameCode, currency, await loadGameConfig(database().db, operatorId, gameCode, currency));
  });

  const credential = program.command('credential').description("rotate and revoke operators' keys");
  action(
    credential
      .command('rotate')
      .description('mint a new key; the keys of that kind before it keep working for 24 hours')
      .requiredOption('--operator <id>', 'the operator')
      .addOption(new Option('--kind <kind>', "api (signs the operator's requests) or wallet (signs our wallet calls)").choices(['api', 'wallet']).makeOptionMandatory())
      .addHelpText('after', SEALING_NOTE),
    (values, database) => {
      const kind = required(values, 'kind');
      if (kind !== 'api' && kind !== 'wallet') throw new UsageError('--kind must be api or wallet');
      const operatorId = required(values, 'operator');
      return sealing((masterKey) => rotateCredential(database().db, masterKey, operatorId, kind === 'api' ? 'API' : 'WALLET'));
    },
  );
  // D34, D38: an API credential verified with the operator's public key
  action(
    credential
      .command('add')
      .description("add an API credential verified with the operator's public key (RS256 or EdDSA); the API keys before it keep working for 24 hours")
      .requiredOption('--operator <id>', 'the operator')
      .addOption(new Option('--kind <kind>', 'api: the only kind an operator signs with').choices(['api']).makeOptionMandatory())
      .addOption(new Option('--alg <alg>', 'RS256 (RSASSA-PKCS1-v1_5 SHA-256) or EdDSA (Ed25519)').choices(['RS256', 'EdDSA']).makeOptionMandatory())
      .option('--public-key-file <file>', 'the public key, PEM (-----BEGIN PUBLIC KEY-----, SPKI)')
      .option('--jwks-url <url>', "the operator's key set (JWKS), fetched and kept at most 10 minutes")
      .addHelpText('after', CREDENTIAL_ADD_HELP),
    async (values, database) => {
      const alg = required(values, 'alg');
      if (alg !== 'RS256' && alg !== 'EdDSA') throw new UsageError('--alg must be RS256 or EdDSA');
      const file = values['public-key-file'];
      const jwksUrl = values['jwks-url'];
      if ((file === undefined) === (jwksUrl === undefined)) throw new UsageError('give exactly one of --public-key-file and --jwks-url');
      let source: { publicKeyPem: string } | { jwksUrl: string };
      if (typeof file === 'string') {
        try {
          source = { publicKeyPem: await readFile(file, 'utf8') };
        } catch (err) {
          throw new UsageError(`cannot read the public key from ${file}: ${(err as Error).message}`);
        }
      } else source = { jwksUrl: String(jwksUrl) };
      return addPublicKeyCredential(database().db, required(values, 'operator'), alg, source, { production: loadConfig().nodeEnv === 'production' });
    },
  );
  action(
    credential.command('revoke').description('stop a key at once (401 key_not_valid_now)').requiredOption('--kid <kid>', 'the key id'),
    (values, database) => revokeCredential(database().db, required(values, 'kid')),
  );

  // D31: the operator's webhook endpoint
  const webhook = program.command('webhook').description("an operator's webhook endpoint (D31)");
  action(
    webhook
      .command('set')
      .description('set (or replace) the endpoint and enable it; prints it')
      .requiredOption('--operator <id>', 'the operator')
      .requiredOption('--url <url>', 'where the events are POSTed')
      .option('--events <types>', 'event types to send, comma-separated (default: every type)')
      .addOption(new Option('--url-private-allowed <bool>', 'with NODE_ENV=production, let the URL resolve to a private address').choices(TRUE_FALSE))
      .addHelpText('after', WEBHOOK_NOTES),
    (values, database) =>
      setWebhookEndpoint(
        database().db,
        required(values, 'operator'),
        { url: required(values, 'url'), events: list(values.events), urlPrivateAllowed: booleanOption(values, 'url-private-allowed') },
        { production: loadConfig().nodeEnv === 'production' },
      ),
  );
  action(webhook.command('show').description("print the operator's endpoint").requiredOption('--operator <id>', 'the operator'), (values, database) =>
    showWebhookEndpoint(database().db, required(values, 'operator')),
  );
  action(
    webhook
      .command('disable')
      .description('stop deliveries: no new events are recorded, pending ones wait until the next `webhook set`')
      .requiredOption('--operator <id>', 'the operator'),
    (values, database) => disableWebhookEndpoint(database().db, required(values, 'operator')),
  );

  const jobs = program.command('jobs').description('wallet jobs');
  action(jobs.command('abandoned').description('wallet jobs given up after 24 hours: tickets for a human'), async (_values, database) => {
    const abandoned = await database().db.walletJob.findMany({ where: { abandonedAt: { not: null } }, orderBy: { abandonedAt: 'asc' } });
    return {
      jobs: abandoned.map((job) => ({
        id: job.id,
        operatorId: job.operatorId,
        endpoint: job.endpoint,
        purpose: job.purpose,
        betId: job.betId,
        transactionUuid: job.transactionUuid,
        attempts: job.attempts,
        lastError: job.lastError,
        createdAt: job.createdAt.toISOString(),
        abandonedAt: job.abandonedAt?.toISOString() ?? null,
        reconciledAt: job.reconciledAt?.toISOString() ?? null,
        reconciledBy: job.reconciledBy,
        reconciliationNote: job.reconciliationNote,
        payload: job.payload,
      })),
    };
  });
  // D36: a human's record that an abandoned job was settled with the wallet; until then
  // retention keeps the job's month
  action(
    jobs
      .command('reconcile')
      .description('record that an abandoned wallet job was settled with the operator: who, when and why (once per job)')
      .requiredOption('--id <id>', 'the wallet job (its id in rgs jobs abandoned)')
      .requiredOption('--note <text>', 'why it is settled: what the wallet says, the ticket, the correction made')
      .option('--by <name>', 'who settled it (default: the user running rgs)'),
    async (values, database) => {
      const id = required(values, 'id');
      if (!UUID.test(id)) throw new UsageError('--id must be a wallet job id (a UUID)');
      try {
        return await reconcileWalletJob(database().sql, { id, note: required(values, 'note'), by: typeof values.by === 'string' ? values.by : runningUser(), now: new Date() });
      } catch (err) {
        if (err instanceof ReconcileError && err.usage) throw new UsageError(err.message);
        throw err;
      }
    },
  );

  // D36: the monthly partitions of the money tables, their archive and their retention
  const partitions = program.command('partitions').description('the monthly partitions of the money tables (D36)');
  action(
    partitions
      .command('ensure')
      .description('make the partitions of the coming months (the scheduler leader does it daily), and of past months with --from')
      .option('--months-ahead <n>', `months after the current one (default ${DEFAULT_MONTHS_AHEAD})`)
      .option('--from <YYYY-MM>', 'also every month from this one (to load history)'),
    (values, database) =>
      ensurePartitions(database().sql, {
        now: new Date(),
        monthsAhead: integerOption(values, 'months-ahead') ?? DEFAULT_MONTHS_AHEAD,
        from: monthOption(values, 'from'),
      }),
  );
  action(
    program
      .command('archive')
      .description("write one month's rows of every partitioned table to a new gzip JSON-lines file, read it back and record it (retention needs it)")
      .requiredOption('--month <YYYY-MM>', 'the month')
      .requiredOption('--out <file>', 'the file to create; an existing file is never overwritten')
      .addHelpText('after', ARCHIVE_HELP),
    (values, database) => archiveMonth(database().sql, monthOption(values, 'month')!, required(values, 'out'), new Date()),
  );
  const retention = program.command('retention').description('drop whole months of the money tables (D36)');
  action(
    retention
      .command('apply')
      .description(`detach and drop every month that ended more than --older-than ago (at least 120d), holds no unfinished money work and has a verified archive`)
      .requiredOption('--older-than <days>', 'an age in days such as 120d; anything under 120d is refused')
      .option('--dry-run', 'say what would be dropped, drop nothing')
      .option('--without-archive', 'also drop finished months that have no verified archive (logged at warn, with each month and its rows)')
      .addHelpText('after', RETENTION_HELP),
    (values, database) => {
      const age = parseRetentionAge(required(values, 'older-than'));
      if (!age.ok) throw new UsageError(age.reason);
      return applyRetention(database().sql, {
        now: new Date(),
        days: age.days,
        dryRun: values['dry-run'] === true,
        withoutArchive: values['without-archive'] === true,
        // stderr: stdout carries the command's JSON answer
        log: createLogger({ level: 'warn', name: 'rgs-retention', destination: process.stderr }),
      });
    },
  );

  const masterKey = program.command('master-key').description('move what is sealed under MASTER_KEY to a new key');
  action(
    masterKey.command('rewrap').description('re-encrypt every credential and server seed from MASTER_KEY to NEW_MASTER_KEY').addHelpText('after', REWRAP_HELP),
    async (_values, database) => {
      const config = loadConfig();
      const newKey = newMasterKey(config);
      const counts = await rewrapMasterKey(database().sql, config.masterKey, newKey);
      if (isDevelopmentMasterKey(newKey)) {
        warnDevelopmentKey('NEW_MASTER_KEY is the development key published in this repository and the credentials and seeds are now sealed under it');
      }
      return counts;
    },
  );

  const signingKey = program.command('signing-key').description("the service's own signing keys (dispute packs, D32)");
  action(
    signingKey
      .command('rotate')
      .description('make a new current dispute-pack key; the old one is retired and stays published at GET /v1/keys')
      .addHelpText('after', SEALING_NOTE.replace('The new secrets are', 'The new private key is')),
    (_values, database) => {
      const { sql } = database();
      return sealing((masterKey) => rotateSigningKey((work) => sql.transaction(work), masterKey, PACK_KEY));
    },
  );
  // D32: a leaked key is revoked, not just retired: no pack it signed verifies any more
  action(
    signingKey
      .command('revoke')
      .description('revoke a dispute-pack key: it signs nothing more and no pack it signed verifies, whatever its date')
      .requiredOption('--kid <kid>', 'the key id (pk_...) as GET /v1/keys lists it')
      .addHelpText('after', REVOKE_HELP + SEALING_NOTE.replace('The new secrets are', 'The new private key is')),
    (values, database) => {
      const { sql } = database();
      return sealing((masterKey) => revokeSigningKey((work) => sql.transaction(work), masterKey, PACK_KEY, required(values, 'kid')));
    },
  );

  // D34: the key that signs session tokens when SESSION_TOKEN_ALG is RS256 or EdDSA
  const tokenKey = program.command('token-key').description("the service's own session-token signing key (D34)");
  action(
    tokenKey
      .command('rotate')
      .description('make a new current session-token key (of SESSION_TOKEN_ALG); the old one keeps verifying for a session lifetime')
      .addHelpText('after', TOKEN_KEY_HELP + SEALING_NOTE.replace('The new secrets are', 'The new private key is')),
    (_values, database) => {
      const { sql } = database();
      const alg = loadConfig().sessionTokenAlg;
      return sealing((masterKey) => rotateSigningKey((work) => sql.transaction(work), masterKey, TOKEN_KEY, alg === 'HS256' ? 'EdDSA' : alg));
    },
  );
  action(
    tokenKey
      .command('revoke')
      .description('revoke a session-token key: it is no longer published and verifies no token; a current one is replaced (of SESSION_TOKEN_ALG)')
      .requiredOption('--kid <kid>', 'the key id (tk_...)')
      .addHelpText('after', SEALING_NOTE.replace('The new secrets are', 'The new private key is')),
    (values, database) => {
      const { sql } = database();
      const alg = loadConfig().sessionTokenAlg;
      return sealing((masterKey) => revokeSigningKey((work) => sql.transaction(work), masterKey, TOKEN_KEY, required(values, 'kid'), alg === 'HS256' ? 'EdDSA' : alg));
    },
  );

  // D32: checks a dispute pack offline, with no database
  action(
    program
      .command('verify-pack')
      .description('check a dispute pack offline; prints each check, exit 0 only when all hold')
      .argument('<file>', 'the pack (the ZIP of GET /v1/rounds/{roundId}/dispute-pack)')
      .requiredOption('--keys <url-or-file>', "the service's public keys: GET /v1/keys, or a saved copy of it (a JWKS file)")
      .addHelpText('after', VERIFY_PACK_HELP),
    async (values) => {
      try {
        const verdict = await verifyPackFile(String(values.file), required(values, 'keys'));
        return verdict.valid ? verdict : new FailedAnswer(verdict);
      } catch (err) {
        if (err instanceof VerifyPackUsageError) throw new UsageError(err.message);
        throw err;
      }
    },
  );

  // D38: an operator's wallet checked against the contract, with no database
  action(
    program
      .command('wallet-check')
      .description("check an operator's wallet against the contract; prints each check, exit 0 only when all pass")
      .requiredOption('--url <url>', "the wallet's base URL (the service appends /wallet/bet etc.)")
      .requiredOption('--kid <kid>', 'the wallet credential: its walletKeyId')
      .requiredOption('--secret <secret>', 'the wallet credential: its walletSignatureSecret')
      .requiredOption('--operator <id>', 'the operator id put in every body')
      .option('--player <ref>', 'the test player', WALLET_CHECK_DEFAULTS.playerRef)
      .option('--currency <code>', "the player's currency", WALLET_CHECK_DEFAULTS.currency)
      .option('--json', 'print JSON instead of the table')
      .addHelpText('after', WALLET_CHECK_HELP),
    async (values) => {
      let options;
      try {
        options = walletCheckOptions(values);
      } catch (err) {
        if (err instanceof WalletCheckUsageError) throw new UsageError(err.message);
        throw err;
      }
      const report = await runWalletCheck(options);
      if (!values.json) return new TextAnswer(walletCheckTable(report, options), !report.passed);
      return report.passed ? report : new FailedAnswer(report);
    },
  );

  // contract 2.11, D2: checks a proof offline, with no database
  action(
    program
      .command('verify')
      .description('check a proof of GET /v1/rounds/{id}/proof offline; exit 0 when valid, 1 when not')
      .option('--proof <file>', 'the proof as JSON; - or left out: stdin'),
    async (values) => {
      const verdict = verifyDiceProof(await readProof(values.proof));
      return verdict.valid ? verdict : new FailedAnswer(verdict);
    },
  );

  configure(program);
  return program;
}

// Every command: commander's errors are thrown back to main (exit 2) instead of exiting,
// printed as one line naming the command, with a hint.
function configure(command: Command, said = new Set<Command>()): void {
  const path = commandPath(command);
  command.exitOverride().configureOutput({
    outputError: (message) => process.stderr.write(usageText(path, message)),
    // commander writes to writeErr only the help of a group called without its command, a
    // piece at a time: one line says so instead
    writeErr: () => {
      if (said.has(command)) return;
      said.add(command);
      process.stderr.write(usageText(path, `a command is required: ${command.commands.map((c) => c.name()).join(', ')}`));
    },
  });
  for (const sub of command.commands) configure(sub, said);
}

const commandPath = (command: Command): string => (command.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name());

function usageText(path: string, message: string): string {
  const line = message
    .trim()
    .replace(/^error: /, '')
    .replace(/\n\((Did you mean [^)]*)\)$/, (_all, suggestion: string) => ` (${suggestion.replace(/^D/, 'd')})`)
    .replace(/\s*\n\s*/g, ' ');
  return `${path}: ${line}\nRun '${path} --help' for usage.\n`;
}

// D25: the commands that seal new secrets under MASTER_KEY. In production loadConfig has
// refused the development key already; elsewhere the secrets are still minted (tests, the
// demo), and once they are, stderr says that anyone with this repository can open them.
async function sealing<T>(seal: (masterKey: Buffer, production: boolean) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const sealed = await seal(config.masterKey, config.nodeEnv === 'production');
  if (config.developmentMasterKey) {
    warnDevelopmentKey(
      process.env.MASTER_KEY
        ? 'MASTER_KEY is the development key published in this repository and these secrets are sealed under it'
        : 'MASTER_KEY is not set, so these secrets are sealed under the development key published in this repository',
    );
  }
  return sealed;
}

function warnDevelopmentKey(what: string): void {
  const warning = {
    warning: 'development_master_key',
    message:
      `${what}: anyone with the source can read them. Set MASTER_KEY to a key of your own before onboarding a real ` +
      'operator; rgs master-key rewrap moves what is sealed already',
  };
  process.stderr.write(`${JSON.stringify(warning)}\n`);
}

// D25: the key `master-key rewrap` seals under, from the environment only (a flag's value
// shows in the process list and the shell history)
function newMasterKey(config: Config): Buffer {
  const text = process.env.NEW_MASTER_KEY;
  if (!text) throw new UsageError('NEW_MASTER_KEY is required: the key to re-encrypt under, 32 bytes as 64 hex characters or base64');
  const key = parseMasterKey(text);
  if (!key) throw new UsageError('NEW_MASTER_KEY must be 32 bytes as 64 hex characters or base64');
  if (config.nodeEnv === 'production' && isDevelopmentMasterKey(key)) {
    throw new Error('NEW_MASTER_KEY is a development key published in this repository: refused when NODE_ENV=production');
  }
  return key;
}

async function readProof(file: Values[string]): Promise<unknown> {
  const source = typeof file === 'string' && file !== '-' ? file : 'stdin';
  let proofText: string;
  try {
    proofText = source === 'stdin' ? await text(process.stdin) : await readFile(source, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the proof from ${source}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(proofText);
  } catch {
    throw new UsageError(`the proof in ${source} is not JSON`);
  }
}

// who runs rgs, for `jobs reconcile` without --by; a process with no such user must name one
function runningUser(): string {
  try {
    return userInfo().username;
  } catch {
    throw new UsageError('--by is required: the user running rgs could not be determined');
  }
}

function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

const list = (value: unknown): string[] | undefined =>
  typeof value === 'string' ? value.split(',').map((item) => item.trim()).filter(Boolean) : undefined;

function integerOption(values: Values, name: string): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,9}$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(value);
}

function monthOption(values: Values, name: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !isMonth(value)) throw new UsageError(`--${name} must be a month, YYYY-MM`);
  return value;
}

function bigintOption(values: Values, name: string): bigint | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,20}$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer`);
  return BigInt(value);
}

function booleanOption(values: Values, name: string): boolean | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false`);
  return value === 'true';
}

function operatorSettings(values: Values): OperatorSettings {
  const rgMax = values['rg-max'];
  return {
    walletUrl: typeof values['wallet-url'] === 'string' ? values['wallet-url'] : undefined,
    walletUrlPrivateAllowed: booleanOption(values, 'wallet-url-private-allowed'),
    currencies: list(values.currency),
    ipAllowList: list(values['ip-allow']),
    jurisdictionsBlocked: list(values['jurisdictions-blocked']),
    frameAncestors: list(values['frame-ancestors']),
    signatureWindowSeconds: integerOption(values, 'signature-window-seconds'),
    suspended: booleanOption(values, 'suspended'),
    sandbox: booleanOption(values, 'sandbox'),
    rgMax: Array.isArray(rgMax) ? rgMax.map(parseRgMaxSpec) : undefined,
  };
}

function gameConfigChanges(values: Values): Partial<GameConfigValues> {
  const changes: Partial<GameConfigValues> = {
    bettingWindowMs: integerOption(values, 'betting-window-ms'),
    rollingWindowMs: integerOption(values, 'rolling-window-ms'),
    cooldownMs: integerOption(values, 'cooldown-ms'),
    minBetMicro: bigintOption(values, 'min-bet-micro'),
    maxBetMicro: bigintOption(values, 'max-bet-micro'),
    commissionMicro: bigintOption(values, 'commission-micro'),
    lowWeight: bigintOption(values, 'low-weight'),
    highWeight: bigintOption(values, 'high-weight'),
  };
  const multiplier = values['payout-multiplier'];
  if (typeof multiplier === 'string') changes.payoutMultiplierScaled = parseMultiplier(multiplier);
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
}

const bigintAsString = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

export async function main(argv = process.argv.slice(2)): Promise<number> {
  let result: unknown;
  try {
    await buildProgram((answer) => (result = answer)).parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help (or `rgs help ...`) printed the usage on stdout; anything else was printed as a
      // usage error
      return err.exitCode === 0 ? 0 : 2;
    }
    const details = (err as { details?: unknown }).details;
    const error = { error: (err as Error).name ?? 'Error', message: (err as Error).message, ...(typeof details === 'object' ? details : {}) };
    process.stderr.write(`${JSON.stringify(error, null, 2)}\n`);
    return 1;
  }
  const answer = result;
  if (answer instanceof TextAnswer) {
    process.stdout.write(answer.text);
    return answer.failed ? 1 : 0;
  }
  const failed = answer instanceof FailedAnswer;
  process.stdout.write(`${JSON.stringify(failed ? answer.answer : answer, bigintAsString, 2)}\n`);
  return failed ? 1 : 0;
}
