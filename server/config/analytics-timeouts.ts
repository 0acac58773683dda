/** Overrides of the analytics statement bounds of a process's role, from the environment. */
import { z } from 'zod';
import { ANALYTICS_TIMEOUT_ENV, ANALYTICS_TIMEOUT_LIMITS } from '../contract/env.ts';
import { intIn } from '../contract/env-schema.ts';

export interface TimeoutOverrides {
  requestTimeoutSeconds?: number;
  maxExecutionTimeSeconds?: number;
}

const { requestTimeoutSeconds: REQUEST, maxExecutionTimeSeconds: EXECUTION } = ANALYTICS_TIMEOUT_ENV;

/** The overrides the environment sets; the store must give up before the client stops waiting. */
export const analyticsTimeoutsSchema = z
  .object({ [REQUEST]: intIn(ANALYTICS_TIMEOUT_LIMITS), [EXECUTION]: intIn(ANALYTICS_TIMEOUT_LIMITS) })
  .superRefine((v, ctx) => {
    const request = v[REQUEST];
    const execution = v[EXECUTION];
    if (request !== undefined && execution !== undefined && execution >= request)
      ctx.addIssue({
        code: 'custom',
        message: `${EXECUTION}=${execution} must be below ${REQUEST}=${request}`,
      });
  })
  .transform((v): { analyticsTimeouts: TimeoutOverrides } => ({
    analyticsTimeouts: {
      ...(v[REQUEST] !== undefined ? { requestTimeoutSeconds: v[REQUEST] } : {}),
      ...(v[EXECUTION] !== undefined ? { maxExecutionTimeSeconds: v[EXECUTION] } : {}),
    },
  }));
