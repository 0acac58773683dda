/** Overrides of the analytics statement bounds of a process's role, from the environment. */
import { ANALYTICS_TIMEOUT_ENV, ANALYTICS_TIMEOUT_LIMITS } from '../../contract/env.ts';
import { fields, intIn } from '../../contract/env-schema.ts';

export interface TimeoutOverrides {
  requestTimeoutSeconds?: number;
  maxExecutionTimeSeconds?: number;
}

const { requestTimeoutSeconds: REQUEST, maxExecutionTimeSeconds: EXECUTION } = ANALYTICS_TIMEOUT_ENV;

/** The overrides the environment sets; the store must give up before the client stops waiting. */
export const analyticsTimeoutsSchema = fields({
  requestTimeoutSeconds: [REQUEST, intIn(ANALYTICS_TIMEOUT_LIMITS)],
  maxExecutionTimeSeconds: [EXECUTION, intIn(ANALYTICS_TIMEOUT_LIMITS)],
})
  .superRefine(({ requestTimeoutSeconds: request, maxExecutionTimeSeconds: execution }, ctx) => {
    if (request !== undefined && execution !== undefined && execution >= request)
      ctx.addIssue({
        code: 'custom',
        message: `${EXECUTION}=${execution} must be below ${REQUEST}=${request}`,
      });
  })
  .transform(
    ({ requestTimeoutSeconds, maxExecutionTimeSeconds }): { analyticsTimeouts: TimeoutOverrides } => ({
      analyticsTimeouts: {
        ...(requestTimeoutSeconds !== undefined ? { requestTimeoutSeconds } : {}),
        ...(maxExecutionTimeSeconds !== undefined ? { maxExecutionTimeSeconds } : {}),
      },
    }),
  );
