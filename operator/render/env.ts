/**
 * Container environment: the mode settings (§3 names from the shared rules module), datastore
 * connections only through secretKeyRef, blob storage (blob-storage.ts), and the switches that
 * hand migrations and the backfill to the operator's Jobs.
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import { ENV, ENV_DEFAULTS } from '../../server/contract/env.ts';
import { WEB_METRICS_PORT } from '../../server/contract/ports.ts';
import type { ModeSettings } from '../../server/contract/write-modes.ts';
import type { Spec } from '../api/effective.ts';
import { blobEnv } from './blob-storage.ts';
import { secret, value } from './env-var.ts';

export interface EnvOptions {
  /** PORT for the long-running roles. */
  port?: number;
  /** The role whose own settings to add (ingestion limit for web, propagation timing for worker). */
  role?: 'web' | 'worker';
  /** The ObservabilityService rendered, named to the web so its migration page can say how to retry. */
  owner?: { namespace: string; name: string };
}

export function containerEnv(spec: Spec, mode: ModeSettings, o: EnvOptions = {}): V1EnvVar[] {
  const ds = spec.datastores;
  const env: V1EnvVar[] = [value(ENV.release, mode.release)];
  if (mode.release === '4') {
    env.push(
      value(ENV.writeMode, mode.writeMode),
      value(ENV.nativeOtelBehaviour, mode.nativeOtelBehaviour),
      value(ENV.allowPreviewOptIn, mode.allowPreviewOptIn),
      value(ENV.enableHistoricBackfill, mode.enableHistoricBackfill),
      value(ENV.dropPidTidSortingTables, mode.dropPidTidSortingTables),
      value(
        ENV.propagationStuckThresholdMinutes,
        spec.propagation?.stuckThresholdMinutes ?? ENV_DEFAULTS.propagationStuckThresholdMinutes,
      ),
    );
  }
  env.push(
    secret(ENV.databaseUrl, ds.postgres.urlSecretRef),
    secret(ENV.clickhouseUrl, ds.clickhouse.urlSecretRef),
    secret(ENV.redisUrl, ds.redis.urlSecretRef),
  );
  if (ds.clickhouse.userSecretRef) env.push(secret(ENV.clickhouseUser, ds.clickhouse.userSecretRef));
  if (ds.clickhouse.passwordSecretRef)
    env.push(secret(ENV.clickhousePassword, ds.clickhouse.passwordSecretRef));
  env.push(
    value(ENV.clickhouseDb, ds.clickhouse.database ?? ENV_DEFAULTS.clickhouseDb),
    value(ENV.columnarClusterEnabled, ds.clickhouse.clusterEnabled ?? ENV_DEFAULTS.columnarClusterEnabled),
    value(ENV.columnarClusterName, ds.clickhouse.clusterName ?? ENV_DEFAULTS.columnarClusterName),
    value(
      ENV.columnarUseLightweightUpdate,
      ds.clickhouse.useLightweightUpdate ?? ENV_DEFAULTS.columnarUseLightweightUpdate,
    ),
    value(ENV.logLevel, spec.logLevel),
    // The operator runs schema migrations and the backfill as Jobs; the pods must not race them.
    value(ENV.autoMigrationDisabled, true),
    value(ENV.backgroundMigrationsInWorker, false),
  );
  if (o.role === 'web')
    env.push(
      value(ENV.maxInFlightWrites, spec.web.maxInFlightWrites),
      value(ENV.metricsPort, WEB_METRICS_PORT),
    );
  if (o.role === 'web' && o.owner)
    env.push(value(ENV.operatorObject, `${o.owner.namespace}/${o.owner.name}`));
  if (o.role === 'worker')
    env.push(
      value(ENV.propagationIntervalSeconds, spec.propagation.intervalSeconds),
      value(ENV.propagationGraceSeconds, spec.propagation.graceSeconds),
      value(ENV.propagationChunkRows, spec.propagation.chunkRows),
    );
  if (o.role) env.push(...blobEnv(spec, o.role));
  if (o.port !== undefined) env.push(value(ENV.port, o.port));
  env.push({ name: ENV.podName, valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
  return env;
}
