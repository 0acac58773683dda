/**
 * The public JS/TS SDKs under test, from the npm registry through package.json: `langfuse` 3.x
 * (batch ingestion) and `@langfuse/tracing` + `@langfuse/otel` + `@langfuse/client` 4.x, 5.x
 * below 5.4 (npm aliases pinned to their own `@langfuse/core`) and 5.x at or above 5.4.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as client5 from '@langfuse/client';
import * as otel5 from '@langfuse/otel';
import * as tracing5 from '@langfuse/tracing';
import * as client4 from 'langfuse-js-4-client';
import * as otel4 from 'langfuse-js-4-otel';
import * as tracing4 from 'langfuse-js-4-tracing';
import * as client53 from 'langfuse-js-5-3-client';
import * as otel53 from 'langfuse-js-5-3-otel';
import * as tracing53 from 'langfuse-js-5-3-tracing';
import { repoRoot } from '../tools/paths.ts';
import type { Tier } from './checks.ts';

// Read from the installed manifest: the packages do not export their package.json.
const versionOf = (pkg: string) =>
  (
    JSON.parse(readFileSync(join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

/** The OpenTelemetry-based SDK of one version: its three packages, typed as the newest. */
export interface OtelSdk {
  label: string;
  version: string;
  tier: Tier;
  tracing: typeof tracing5;
  otel: typeof otel5;
  client: typeof client5;
}

/** An older SDK's modules typed as the current one's: the tests call only what every version has. */
const typedAsCurrent = (tracing: unknown, otel: unknown, client: unknown) => ({
  tracing: tracing as typeof tracing5,
  otel: otel as typeof otel5,
  client: client as typeof client5,
});

export const OTEL_SDKS: OtelSdk[] = [
  {
    label: '@langfuse 4.x',
    version: versionOf('langfuse-js-4-otel'),
    tier: 'older',
    ...typedAsCurrent(tracing4, otel4, client4),
  },
  {
    label: '@langfuse 5.x below 5.4',
    version: versionOf('langfuse-js-5-3-otel'),
    tier: 'delayed',
    ...typedAsCurrent(tracing53, otel53, client53),
  },
  {
    label: '@langfuse 5.x',
    version: versionOf('@langfuse/otel'),
    tier: 'real-time',
    tracing: tracing5,
    otel: otel5,
    client: client5,
  },
];

export const LANGFUSE_V3_VERSION = versionOf('langfuse');
