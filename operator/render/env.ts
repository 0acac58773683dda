/**
 * Container environment: the mode settings (§3 names from the shared rules module), datastore
 * connections only through secretKeyRef, and the switches that hand migrations and the backfill
 * to the operator's Jobs.
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import { ENV, type ModeSettings } from '../../server/config/write-modes.ts';
import type { ObservabilityServiceSpec, SecretKeyRef } from '../api/v1alpha1.ts';

const value = (name: string, v: string | number | boolean): V1EnvVar => ({ name, value: String(v) });
const secret = (name: string, ref: SecretKeyRef): V1EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } },
});

export interface EnvOptions {
  /** PORT for the long-running roles. */
  port?: number;
}

export function containerEnv(
  spec: ObservabilityServiceSpec,
  mode: ModeSettings,
  o: EnvOptions = {},
): V1EnvVar[] {
  const ds = spec.datastores;
  const env: V1EnvVar[] = [value(ENV.release, mode.release)];
  if (mode.release === '4') {
    env.push(
      value(ENV.writeMode, mode.writeMode),
      value(ENV.nativeOtelBehaviour, mode.nativeOtelBehaviour),
      value(ENV.allowPreviewOptIn, mode.allowPreviewOptIn),
      value(ENV.enableHistoricBackfill, mode.enableHistoricBackfill),
      value(ENV.dropPidTidSortingTables, mode.dropPidTidSortingTables),
      value(ENV.propagationStuckThresholdMinutes, spec.propagation?.stuckThresholdMinutes ?? 15),
    );
  }
  env.push(
    secret('DATABASE_URL', ds.postgres.urlSecretRef),
    secret('CLICKHOUSE_URL', ds.clickhouse.urlSecretRef),
    secret('REDIS_URL', ds.redis.urlSecretRef),
  );
  if (ds.clickhouse.userSecretRef) env.push(secret('CLICKHOUSE_USER', ds.clickhouse.userSecretRef));
  if (ds.clickhouse.passwordSecretRef)
    env.push(secret('CLICKHOUSE_PASSWORD', ds.clickhouse.passwordSecretRef));
  env.push(
    value('CLICKHOUSE_DB', ds.clickhouse.database ?? 'default'),
    value(ENV.columnarClusterEnabled, ds.clickhouse.clusterEnabled ?? false),
    // The operator runs schema migrations and the backfill as Jobs; the pods must not race them.
    value('SERVICE_AUTO_MIGRATION_DISABLED', true),
    value('SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER', false),
  );
  if (o.port !== undefined) env.push(value('PORT', o.port));
  env.push({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
  return env;
}
