import type { CatalogueCurrency, CatalogueGame } from '../../shared/game/operators/game-config.js';
import { microAmount, objectSchema } from './common.js';

// D39 GET /v1/games: the games the calling operator may launch.

const multiplier = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' } as const;
const rtp = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'the exact return to player as a decimal ("0.97"), from the par sheet (D39)' } as const;

export const catalogueSchema = objectSchema<{ games: CatalogueGame[] }>({
  games: {
    type: 'array',
    description: 'the games a session of the calling operator may launch (D39)',
    items: objectSchema<CatalogueGame>({
      gameCode: { type: 'string', description: 'the gameCode of POST /v1/session' },
      kind: { enum: ['shared', 'instant'], description: 'shared: rounds on an engine clock shared by the players of an operator, game and currency; instant: a round per play' },
      name: { type: 'string' },
      rngVersion: { type: 'string', description: 'the derivation a proof of this game names (contract 2.11)' },
      mathVersion: { type: 'string' },
      rtp: { ...rtp, description: "the return to player of the game's defaults, for a bet of its typical parameters (dice: LOW; crash: cashing out at 2.00x)" },
      maxMultiplier: { ...multiplier, description: 'the most a bet returns per unit staked under the defaults' },
      availableInEveryCurrency: {
        type: 'boolean',
        description: 'true: every operator may launch the game in any permitted currency, with its defaults where it has no configuration; false: only in the currencies listed',
      },
      currencies: {
        type: 'array',
        description: "the operator's configurations of the game, one per currency",
        items: objectSchema<CatalogueCurrency>({
          currency: { type: 'string' },
          minBetMicro: microAmount,
          maxBetMicro: microAmount,
          stakeStepMicro: { ...microAmount, description: 'a stake is a multiple of this (D46)' },
          rtp,
          maxMultiplier: multiplier,
          jackpotPoolMicro: {
            ...microAmount,
            description: "a game with a progressive jackpot (D41): the operator's pool in this currency as it stands, or its seed before the first play fed it",
          },
        }, {}, ['jackpotPoolMicro']),
      },
      features: {
        type: 'array',
        items: { type: 'string' },
        description: 'what a bet may carry beside its stake, and what the game has (crash: auto_cash_out; gems: free_spins, feature_buy, jackpot)',
      },
    }),
  },
});
