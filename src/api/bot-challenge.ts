import type { Config } from '../shared/platform/config.js';
import { botChallengeFailed } from '../shared/platform/errors.js';
import type { Logger } from '../shared/platform/logger.js';

// contract 5.7 and D20: optional bot challenge on session create, siteverify style (POST
// form secret, response, remoteip; JSON answer with boolean success). Skipped when no
// secret is configured; fail-open when the verifier is unreachable unless configured closed.
// log: the request's logger (request-log.ts)
export type BotChallenge = (token: string | undefined, remoteIp: string, log?: Logger) => Promise<void>;

export function createBotChallenge(settings: Config['botChallenge'], logger: Logger): BotChallenge {
  if (!settings) return async () => undefined;
  return async (token, remoteIp, log = logger) => {
    if (!token) throw botChallengeFailed('a bot challenge token is required');
    let verdict: boolean | 'unreachable';
    try {
      const response = await fetch(settings.verifyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ secret: settings.secret, response: token, remoteip: remoteIp }).toString(),
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
      if (!response.ok) verdict = 'unreachable';
      else {
        const answer = (await response.json()) as { success?: unknown };
        verdict = typeof answer?.success === 'boolean' ? answer.success : 'unreachable';
      }
    } catch {
      verdict = 'unreachable';
    }
    if (verdict === true) return;
    if (verdict === 'unreachable') {
      log.warn({ failClosed: settings.failClosed }, 'bot challenge verifier unreachable');
      if (!settings.failClosed) return;
      throw botChallengeFailed('the bot challenge could not be verified');
    }
    throw botChallengeFailed('the bot challenge was not passed');
  };
}
