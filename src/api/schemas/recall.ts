import { RECALL_LINK_LIFETIME_SECONDS } from '../../shared/game/reports/recall-link.js';
import { instant, objectSchema } from './common.js';

// GET /v1/rounds/{roundId}/replay-url (D33): the recall link of a finished round.
export const replayUrlSchema = objectSchema<{ url: string; expiresAt: string }>({
  url: {
    type: 'string',
    format: 'uri',
    description: 'PUBLIC_URL/replay/{roundId}?t=...: the round as the player lived it, an HTML page of the service (D33); add &lang=de (any language of the game page) for its words and number format (D38)',
  },
  expiresAt: { ...instant, description: `when the link stops working: ${RECALL_LINK_LIFETIME_SECONDS / 3600} hours after it was made (D33)` },
});
