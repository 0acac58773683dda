/**
 * What a producer of the producers report has to change before `events_only` (pure): which SDK
 * version to upgrade to, from the spec's version rules (../ingestion/sdk-versions.ts), and what
 * the path it uses becomes. One sentence per producer, for the migration page.
 */
import type { ProducerSeen } from '../../contract/worker-api.ts';
import { SDK_RULES, sdkFamily, sdkTier } from '../ingestion/sdk-versions.ts';

const PYTHON = `Python SDK >= ${SDK_RULES.python.realTimeFrom}`;
const JS = `JS/TS SDK >= ${SDK_RULES.js.realTimeFrom}`;

/** The real-time SDK of the producer's own language, or both when it is not a reference SDK. */
function target(sdkName: string): string {
  const family = sdkFamily(sdkName);
  return family === 'python' ? PYTHON : family === 'js' ? JS : `${PYTHON} or ${JS}`;
}

export function upgradeAdvice(p: Pick<ProducerSeen, 'sdkName' | 'sdkVersion' | 'path'>): string {
  const sdk = `${p.sdkName}@${p.sdkVersion}`;
  const tier = sdkTier(p.sdkName, p.sdkVersion);
  if (tier === 'real-time' && p.path !== 'otel-dual-path') {
    // No upgrade needed: the calls themselves must move.
    return p.path === 'ingestion-api'
      ? `${sdk} already traces through OpenTelemetry, but something calls /api/public/ingestion with traces or observations, which events_only refuses: move those calls to the SDK's tracing.`
      : `${sdk} calls deprecated endpoints that answer 404 in events_only: move those calls to the version 4 APIs (observations v2, scores v3, metrics v2).`;
  }
  switch (p.path) {
    case 'ingestion-api':
      return (
        `${sdk} sends traces and observations to /api/public/ingestion, which events_only refuses ` +
        `(it keeps only scores)${tier === 'refused' ? ', and rejects this SDK version outright' : ''}: ` +
        `upgrade to ${target(p.sdkName)}, which sends OpenTelemetry.`
      );
    case 'legacy-endpoint':
      return (
        `${sdk} calls deprecated endpoints that answer 404 in events_only: upgrade to ` +
        `${target(p.sdkName)} and read through the version 4 APIs (observations v2, scores v3, metrics v2).`
      );
    case 'otel-dual-path':
      return (
        `${sdk} sends OpenTelemetry without client-side propagation: events_only writes its spans ` +
        `directly, without the trace attributes copied onto them. Upgrade to ${target(p.sdkName)}, ` +
        'or send x-langfuse-ingestion-version: 4 from a client that propagates them itself.'
      );
  }
}
