/** Overrides of the analytics statement bounds of a process's role, from the environment. */
import { ANALYTICS_TIMEOUT_ENV, ANALYTICS_TIMEOUT_LIMITS, type EnvReader } from '../contract/env.ts';

export interface TimeoutOverrides {
  requestTimeoutSeconds?: number;
  maxExecutionTimeSeconds?: number;
}

/** The overrides the environment sets; contradictory ones are added to the reader's problems. */
export function readTimeoutOverrides(r: EnvReader): TimeoutOverrides {
  const request = r.intIn(ANALYTICS_TIMEOUT_ENV.requestTimeoutSeconds, undefined, ANALYTICS_TIMEOUT_LIMITS);
  const execution = r.intIn(
    ANALYTICS_TIMEOUT_ENV.maxExecutionTimeSeconds,
    undefined,
    ANALYTICS_TIMEOUT_LIMITS,
  );
  if (request !== undefined && execution !== undefined && execution >= request)
    r.problems.push(
      `${ANALYTICS_TIMEOUT_ENV.maxExecutionTimeSeconds}=${execution} must be below ${ANALYTICS_TIMEOUT_ENV.requestTimeoutSeconds}=${request}`,
    );
  return {
    ...(request !== undefined ? { requestTimeoutSeconds: request } : {}),
    ...(execution !== undefined ? { maxExecutionTimeSeconds: execution } : {}),
  };
}
