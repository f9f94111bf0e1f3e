import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Database } from '../../shared/platform/db/client.js';
import { AppError } from '../../shared/platform/errors.js';
import { GRANT_STATUSES, cancelCampaign, requireOperator, createCampaign, listGrants, type GrantStatus, type GrantView } from '../../shared/game/freebets/campaigns.js';
import { decodeCursor, type ListingPosition } from '../../shared/game/reports/cursor.js';
import { integerOption, required, UsageError, type Action } from '../kit.js';

// `rgs freebets create|list|cancel` (D42): the free-bet campaigns of an operator, through the
// same functions as POST, GET and DELETE /v1/freebets, so the same rules refuse the same terms.

const CREATE_NOTES = `
--players-file is a text file with one playerRef per line (a CSV of one column); blank lines
are skipped. The stake is decimal micro-units: 1.00 = 100000. The same --campaign-ref with the
same terms prints the campaign it made before; with other terms it is refused
campaign_conflict. A player sees the grants of a session's game and currency in connected and
plays one with place_bet's freeBetGrantId (D42).`;

// a refusal of the shared rules, printed {error: code, message, details?} as the API answers it
async function asAnswer<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const failed = new Error(err.message) as Error & { details?: unknown };
    failed.name = err.code;
    failed.details = err.extra;
    throw failed;
  }
}

const operatorExists = (database: Database, operatorId: string): Promise<void> => requireOperator(database.db, operatorId);

const context = (database: Database) => ({ db: database.db, sql: database.sql, now: new Date() });

async function playersOf(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new UsageError(`--players-file cannot be read: ${file}`);
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

export function freeBetsCommands(program: Command, action: Action): void {
  const freebets = program.command('freebets').description("an operator's free-bet campaigns (D42)");
  action(
    freebets
      .command('create')
      .description('grant free rounds of a game to players; prints {campaignId, grants}')
      .requiredOption('--operator <id>', 'the operator')
      .requiredOption('--campaign-ref <ref>', "the operator's name for the campaign (1 to 64 of A-Z a-z 0-9 . _ : -)")
      .requiredOption('--game <code>', 'the game')
      .requiredOption('--currency <code>', 'the currency')
      .requiredOption('--stake <micro>', "each round's stake, in micro-units (1.00 = 100000)")
      .requiredOption('--rounds <n>', 'free rounds per player, 1 to 1000')
      .requiredOption('--expires-at <instant>', 'when unplayed rounds expire (RFC 3339), at most 90 days from now')
      .option('--valid-from <instant>', 'when the rounds may first be played (default: now)')
      .requiredOption('--players-file <file>', 'one playerRef per line')
      .addHelpText('after', CREATE_NOTES),
    async (values, database) => {
      const operatorId = required(values, 'operator');
      const playerRefs = await playersOf(required(values, 'players-file'));
      const validFrom = values['valid-from'];
      const input = {
        campaignRef: required(values, 'campaign-ref'),
        gameCode: required(values, 'game'),
        currency: required(values, 'currency'),
        stakeMicro: required(values, 'stake'),
        rounds: integerOption(values, 'rounds') ?? 0,
        playerRefs,
        expiresAt: required(values, 'expires-at'),
        ...(typeof validFrom === 'string' ? { validFrom } : {}),
      };
      await operatorExists(database(), operatorId);
      const created = await asAnswer(() => createCampaign(context(database()), operatorId, input));
      return { campaignId: created.campaignId, grants: created.grants };
    },
  );
  action(
    freebets
      .command('list')
      .description("print the operator's grants, oldest first")
      .requiredOption('--operator <id>', 'the operator')
      .option('--player <ref>', "only this player's grants")
      .option('--campaign-ref <ref>', 'only the grants of this campaign')
      .option('--status <status>', `only the grants in this status: ${GRANT_STATUSES.join(', ')}`),
    async (values, database) => {
      const operatorId = required(values, 'operator');
      const status = values.status;
      if (status !== undefined && !GRANT_STATUSES.includes(status as GrantStatus)) throw new UsageError(`--status must be one of ${GRANT_STATUSES.join(', ')}`);
      await operatorExists(database(), operatorId);
      const query = {
        ...(typeof values.player === 'string' ? { playerRef: values.player } : {}),
        ...(typeof values['campaign-ref'] === 'string' ? { campaignRef: values['campaign-ref'] } : {}),
        ...(status === undefined ? {} : { status: status as GrantStatus }),
      };
      // every page: an administrator reads the whole list
      const grants: GrantView[] = [];
      let after: ListingPosition | undefined;
      for (;;) {
        const page = await listGrants(context(database()), operatorId, { ...query, after, limit: 500 });
        grants.push(...page.grants);
        after = page.nextCursor ? decodeCursor(page.nextCursor) : undefined;
        if (!after) break;
      }
      return { grants };
    },
  );
  action(
    freebets
      .command('cancel')
      .description("cancel a campaign's unplayed rounds (played rounds stand); prints its totals")
      .requiredOption('--operator <id>', 'the operator')
      .requiredOption('--campaign <id>', 'the campaignId'),
    async (values, database) => {
      const operatorId = required(values, 'operator');
      const campaignId = required(values, 'campaign').toLowerCase();
      await operatorExists(database(), operatorId);
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(campaignId)) throw new UsageError('--campaign must be a campaignId (a UUID)');
      return asAnswer(() => cancelCampaign(context(database()), operatorId, campaignId));
    },
  );
}
