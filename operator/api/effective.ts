/**
 * The spec as the operator reads it: defaults applied (what the API server stores) and the
 * documented meaning of unset fields, in one place so validation, rendering and planning agree.
 */
import { applyDefaults } from './schema.ts';
import {
  type AutoscalingSpec,
  type MigrationState,
  type ObservabilityServiceSpec,
  type OtelBehaviour,
  specSchema,
} from './v1alpha1.ts';

/** A spec with every defaulted field present. */
export type Spec = ObservabilityServiceSpec & {
  imagePullPolicy: NonNullable<ObservabilityServiceSpec['imagePullPolicy']>;
  allowPreviewOptIn: boolean;
  paused: boolean;
  hibernate: boolean;
  logLevel: NonNullable<ObservabilityServiceSpec['logLevel']>;
  propagation: {
    stuckThresholdMinutes: number;
    failureThreshold: number;
    intervalSeconds: number;
    graceSeconds: number;
    chunkRows: number;
  };
  cutover: NonNullable<ObservabilityServiceSpec['cutover']> & {
    approval: 'Manual' | 'Automatic';
    producerQuietPeriod: string;
  };
  web: NonNullable<ObservabilityServiceSpec['web']> & { replicas: number; maxInFlightWrites: number };
  worker: NonNullable<ObservabilityServiceSpec['worker']> & {
    replicas: number;
    autoscaling?: Required<AutoscalingSpec>;
  };
};

export function withDefaults(spec: ObservabilityServiceSpec): Spec {
  return applyDefaults(specSchema, spec) as Spec;
}

/** The state the user asks for: release "3" is Release3, otherwise the write mode. */
export function desiredState(spec: ObservabilityServiceSpec): MigrationState {
  if (spec.release === '3') return 'Release3';
  return spec.writeMode ?? 'EventsOnly';
}

/** Unset `backfill.enabled` means off in Legacy (where it is forbidden) and on otherwise. */
export function backfillEnabled(spec: ObservabilityServiceSpec): boolean {
  return spec.backfill?.enabled ?? (spec.release === '4' && spec.writeMode !== 'Legacy');
}

/** The backfill chain steps that run: 1-4, plus 5 (drop the scratch table) when asked. */
export function enabledSteps(spec: ObservabilityServiceSpec): number[] {
  return spec.backfill?.dropScratchTables ? [1, 2, 3, 4, 5] : [1, 2, 3, 4];
}

/**
 * Unset `nativeOtelBehaviour` means DualWrite in Dual (older producers go through staging) and
 * the spec's default, Direct, elsewhere: Legacy writes no events table, so only the backfill
 * variable must be off there (the spec's transition table).
 */
export function otelBehaviourIn(
  state: 'Legacy' | 'Dual' | 'EventsOnly',
  spec: ObservabilityServiceSpec,
): OtelBehaviour {
  if (state === 'Legacy') return spec.nativeOtelBehaviour ?? 'Direct';
  if (state === 'EventsOnly') return 'Direct';
  return spec.nativeOtelBehaviour ?? 'DualWrite';
}

/** The autoscaler's settings when it is on; undefined: the worker runs spec.worker.replicas. */
export function workerAutoscaling(spec: Spec): Required<AutoscalingSpec> | undefined {
  return spec.worker.autoscaling?.enabled ? spec.worker.autoscaling : undefined;
}
