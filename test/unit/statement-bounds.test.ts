/** Every analytics statement of a process is bounded as its role needs (statement-bounds.ts). */
import { describe, expect, it } from 'vitest';
import type { AnalyticsRole } from '../../server/contract/env.ts';
import type { TimeoutOverrides } from '../../server/kernel/config/analytics-timeouts.ts';
import { ConfigError, loadConfig } from '../../server/kernel/config/env.ts';
import { statementBounds } from '../../server/platform/datastores/statement-bounds.ts';

const REQUEST = 'CLICKHOUSE_REQUEST_TIMEOUT_SECONDS';
const EXECUTION = 'CLICKHOUSE_MAX_EXECUTION_TIME_SECONDS';
const PROGRESS = { send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '25000' };

describe('analytics statement bounds per role', () => {
  const table: [AnalyticsRole, TimeoutOverrides, number, number, boolean][] = [
    // role, overrides, request_timeout (ms), max_execution_time (s), progress headers
    ['web', {}, 30_000, 25, false],
    ['worker', {}, 600_000, 570, true],
    ['backfill', {}, 1_800_000, 1740, true],
    ['jobs', {}, 1_800_000, 1740, true],
    ['web', { requestTimeoutSeconds: 10 }, 10_000, 5, false],
    ['web', { requestTimeoutSeconds: 3 }, 3_000, 1, false],
    ['web', { requestTimeoutSeconds: 120 }, 120_000, 25, true],
    ['web', { maxExecutionTimeSeconds: 100 }, 105_000, 100, true],
    ['worker', { maxExecutionTimeSeconds: 60 }, 600_000, 60, true],
    ['backfill', { requestTimeoutSeconds: 7200, maxExecutionTimeSeconds: 7000 }, 7_200_000, 7000, true],
    ['worker', { requestTimeoutSeconds: 60 }, 60_000, 55, false],
  ];
  it.each(table)(
    '%s %o: request_timeout %i ms, max_execution_time %i s, progress %s',
    (role, o, request, execution, progress) => {
      const b = statementBounds(role, o);
      expect(b.requestTimeout).toBe(request);
      expect(b.settings).toEqual({ max_execution_time: execution, ...(progress ? PROGRESS : {}) });
      // The store gives up first, with a reason, before the client stops waiting.
      expect(execution * 1000).toBeLessThan(request);
      // Room for every progress header the longest statement may receive.
      if (progress)
        expect(b.maxResponseHeadersSize).toBeGreaterThanOrEqual(16 * 1024 + (request / 25_000) * 200);
      else expect(b.maxResponseHeadersSize).toBeUndefined();
    },
  );

  it.each([
    [{}, {}],
    [{ [REQUEST]: '120' }, { requestTimeoutSeconds: 120 }],
    [
      { [REQUEST]: '120', [EXECUTION]: '100' },
      { requestTimeoutSeconds: 120, maxExecutionTimeSeconds: 100 },
    ],
  ])('reads %o from the environment', (env, overrides) => {
    expect(loadConfig(env).analyticsTimeouts).toEqual(overrides);
  });

  it.each([
    [{ [REQUEST]: '0' }, `${REQUEST}=0 is not an integer between 1 and 86400`],
    [{ [EXECUTION]: 'soon' }, `${EXECUTION}=soon is not an integer between 1 and 86400`],
    [{ [REQUEST]: '60', [EXECUTION]: '60' }, `${EXECUTION}=60 must be below ${REQUEST}=60`],
  ])('refuses %o, naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
