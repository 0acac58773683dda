/**
 * Which routes a deployment serves, from the write-mode rules (server/contract/write-modes.ts).
 * Every route names its gate in its config; an `onRequest` hook of the scope the families are
 * registered in (server/app/web/app.ts, the UI's signed-in scope; the legacy writes in their own, after their
 * tally) checks it, so a route that the mode does not serve answers 404 before its request is
 * parsed or validated (the spec: 404 whatever the request).
 */
import type { onRequestAsyncHookHandler } from 'fastify';
import { behaviourOf, type ModeSettings } from '../../contract/write-modes.ts';
import { NotFound } from '../../kernel/errors.ts';
import type { RouteContext } from './context.ts';

export const GATES = ['always', 'deprecated', 'v4-reads', 'metrics-v2', 'release-4'] as const;
/**
 * - `always`: every mode and release.
 * - `deprecated`: the legacy endpoints of the spec's table: `legacy` and `dual`, 404 in `events_only`.
 * - `v4-reads`: observations v2 and experiments: `events_only`, or `dual` with the preview opt-in.
 * - `metrics-v2`: as `v4-reads`, and only where the events tables are written (not `legacy`).
 * - `release-4`: every mode of release 4; release 3 has no version 4 endpoint.
 */
export type Gate = (typeof GATES)[number];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which deployments serve this route; `always` when absent. */
    gate?: Gate;
  }
}

const NOT_IN_EVENTS_ONLY =
  'This endpoint is not available on deployments running write mode events_only. ' +
  'Use OpenTelemetry ingestion (/api/public/otel/v1/traces) and the version 4 read APIs.';
const V4_ONLY =
  'This endpoint is only available in a version 4 write mode (events_only, or dual with SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN=true).';
const NOT_IN_LEGACY = 'Metrics API v2 is not available in write mode legacy.';
const NOT_ON_RELEASE_3 = 'This endpoint is not available on release 3.';

/** Why `settings` do not serve a route behind `gate`, or undefined when they do. Pure. */
export function refusalOf(gate: Gate, settings: ModeSettings): string | undefined {
  const b = behaviourOf(settings);
  switch (gate) {
    case 'always':
      return undefined;
    case 'deprecated':
      return b.servesLegacyEndpoints ? undefined : NOT_IN_EVENTS_ONLY;
    case 'v4-reads':
      return b.servesV4Reads ? undefined : V4_ONLY;
    case 'metrics-v2':
      if (!b.servesV4Reads) return V4_ONLY;
      return b.writesEventsTables ? undefined : NOT_IN_LEGACY;
    case 'release-4':
      return settings.release === '4' ? undefined : NOT_ON_RELEASE_3;
  }
}

/** The `onRequest` hook of a scope of families: 404 for a route its deployment does not serve. */
export function modeGate(ctx: RouteContext): onRequestAsyncHookHandler {
  return async (req) => {
    const refusal = refusalOf(req.routeOptions.config.gate ?? 'always', ctx.config.mode);
    if (refusal !== undefined) throw new NotFound(refusal);
  };
}
