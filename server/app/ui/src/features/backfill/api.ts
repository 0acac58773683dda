/** The migration page's one read: write mode, the backfill's steps, the propagation, legacy producers. */
import { call } from '../../shared/api.ts';

export interface BackfillStepView {
  step: number;
  name: string;
  status: 'dormant' | 'pending' | 'running' | 'finished' | 'failed';
  chunksDone: number;
  chunksTotal: number;
  finishedAt: string | null;
  failedAt: string | null;
  failedReason: string | null;
  lockedBy: string | null;
  /** kubectl: the annotation command when an operator runs the service (it then owns the retries). */
  retry: { command: string; annotation: string; value: string; kubectl: string | null } | null;
}

export interface PropagationView {
  enabled: boolean;
  stuck: boolean;
  idle: boolean;
  lastSuccessAt: string | null;
  secondsSinceLastSuccess: number | null;
  lastProcessedPartition: string | null;
  propagationDelaySeconds: number | null;
  thresholdSeconds: number;
  lastError: string | null;
}

export interface ProducerView {
  projectId: string;
  publicKey: string;
  sdkName: string;
  sdkVersion: string;
  path: string;
  consequence: 'refused' | 'loses-propagation';
  lastSeen: string;
  requests: number;
  advice: string;
}

/** An enabled trace-level evaluation rule: it stops at the cutover to events_only. */
export interface LegacyEvaluatorView {
  projectId: string;
  ruleId: string;
  name: string;
}

export interface MigrationInfo {
  release: string;
  writeMode: string;
  allowPreviewOptIn: boolean;
  backfillMayRun: boolean;
  /** Owner of the deployment's organization: sees the backfill, the propagation, every producer. */
  deploymentAdmin: boolean;
  /** Null for a user who is not a deployment admin. */
  steps: BackfillStepView[] | null;
  propagation: PropagationView | null;
  producers: {
    since: string;
    window: string;
    data: ProducerView[];
    legacyEvaluators: LegacyEvaluatorView[];
  } | null;
}

export const backfillApi = {
  migration: () => call<MigrationInfo>('GET', '/api/ui/migration'),
};
