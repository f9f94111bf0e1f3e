import { Option, type Command } from 'commander';
import { loadConfig } from '../../shared/platform/config.js';
import { EVENT_TYPES } from '../../shared/domain/events.js';
import { disableWebhookEndpoint, setWebhookEndpoint, showWebhookEndpoint } from '../../shared/game/webhooks/endpoints.js';
import { TRUE_FALSE, booleanOption, list, required, type Action } from '../kit.js';

// `rgs webhook set|show|disable` (D31): an operator's webhook endpoint.

const WEBHOOK_NOTES = `
Event types: ${EVENT_TYPES.join(', ')}. A webhook.test event (POST /v1/webhooks/test) is
sent whatever --events says. Every request is signed with the operator's current wallet
credential, like a wallet call (D6, D31). The URL follows the wallet URL's rules: with
NODE_ENV=production it must be https:, carry no credentials and resolve to a public address
(unless --url-private-allowed true). Options left out of a new set take their default.`;

export function webhookCommands(program: Command, action: Action): void {
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
}
