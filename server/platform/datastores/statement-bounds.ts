/**
 * The bounds every analytics statement of a process carries (pure): the client's
 * `request_timeout`, the store's `max_execution_time` a little below it (so the store stops the
 * statement and says why before the client gives up), and on statements allowed over a minute
 * progress headers that keep the connection alive through load balancers (the client warns
 * without them).
 */
import type { ClickHouseSettings } from '@clickhouse/client';
import {
  ANALYTICS_PROGRESS_INTERVAL_MS,
  ANALYTICS_ROLE_BOUNDS,
  type AnalyticsRole,
} from '../../contract/env.ts';
import type { TimeoutOverrides } from '../../kernel/config/analytics-timeouts.ts';

export interface StatementBounds {
  /** Milliseconds (@clickhouse/client `request_timeout`). */
  requestTimeout: number;
  settings: ClickHouseSettings;
  /**
   * Bytes of response headers the client accepts: room for every progress header the longest
   * statement can send (Node's default, 16 KiB, holds about 75), undefined without them.
   */
  maxResponseHeadersSize: number | undefined;
}

/** What one `X-ClickHouse-Progress` header takes, generously, and the other headers of an answer. */
const PROGRESS_HEADER_BYTES = 256;
const BASE_HEADER_BYTES = 16 * 1024;

/** The client stops waiting after the store's own limit plus this margin. */
const CLIENT_MARGIN_SECONDS = 5;
/** Over this the client's warning asks for progress headers (its own threshold). */
const PROGRESS_ABOVE_MS = 60_000;

/** A role's bounds with the process's overrides applied. */
export function statementBounds(role: AnalyticsRole, o: TimeoutOverrides = {}): StatementBounds {
  const d = ANALYTICS_ROLE_BOUNDS[role];
  const execution =
    o.maxExecutionTimeSeconds ??
    (o.requestTimeoutSeconds === undefined
      ? d.maxExecutionTimeSeconds
      : Math.max(1, Math.min(d.maxExecutionTimeSeconds, o.requestTimeoutSeconds - CLIENT_MARGIN_SECONDS)));
  const request =
    o.requestTimeoutSeconds ?? Math.max(d.requestTimeoutSeconds, execution + CLIENT_MARGIN_SECONDS);
  const requestTimeout = request * 1000;
  const progress = requestTimeout > PROGRESS_ABOVE_MS;
  return {
    requestTimeout,
    settings: {
      max_execution_time: execution,
      ...(progress
        ? {
            send_progress_in_http_headers: 1,
            http_headers_progress_interval_ms: String(ANALYTICS_PROGRESS_INTERVAL_MS),
          }
        : {}),
    },
    maxResponseHeadersSize: progress
      ? BASE_HEADER_BYTES + Math.ceil(requestTimeout / ANALYTICS_PROGRESS_INTERVAL_MS) * PROGRESS_HEADER_BYTES
      : undefined,
  };
}
