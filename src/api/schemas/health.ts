import type { DependencyStates } from '../../shared/platform/dependencies.js';
import { objectSchema } from './common.js';

// The answers of the open health routes (D15).

export type LiveBody = { status: 'ok' };
export type ReadyBody = { status: 'ready' | 'not_ready'; checks: DependencyStates };

export const liveSchema = objectSchema<LiveBody>({ status: { const: 'ok' } });

const check = { enum: ['ok', 'failed'] } as const;
export const readySchema = objectSchema<ReadyBody>({
  status: { enum: ['ready', 'not_ready'] },
  checks: objectSchema<DependencyStates>({ postgres: check, redis: check }),
});
