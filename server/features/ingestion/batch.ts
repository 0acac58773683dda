/**
 * Batch ingestion: validates each event on its own, answers every event in the 207 envelope, and
 * acknowledges only what is durable: in the ingestion log when there is one, else in the analytics
 * store. Which tables are written follows the write mode (server/contract/write-modes.ts).
 */
import { randomUUID } from 'node:crypto';
import { batchTargets, behaviourOf, type ModeSettings } from '../../contract/write-modes.ts';
import {
  describeIssues,
  type IngestionEvent,
  ingestionEvent,
  OBSERVATION_CREATE_TYPES,
  OBSERVATION_UPDATE_TYPES,
  type ObservationType,
} from '../write-model/bodies.ts';
import { LegacyChanges } from '../write-model/changes.ts';
import { type Attribution, type Row, type RowContext, scoreRow } from '../write-model/records.ts';
import { isRefusedInEventsOnly, refusalReason } from './sdk-versions.ts';
import { type AcceptDeps, acceptWrite } from './write.ts';

export interface EventSuccess {
  id: string;
  status: 201;
}
export interface EventError {
  id: string;
  status: 400;
  message: string;
  error?: string;
}
export interface BatchResult {
  successes: EventSuccess[];
  errors: EventError[];
}

export interface BatchContext extends AcceptDeps {
  projectId: string;
  settings: ModeSettings;
  attribution: Attribution;
  now?: number;
}

/** What an operator of a refused producer is told (the spec leaves the wording to us). */
export const EVENTS_ONLY_REFUSAL =
  'This deployment runs write mode events_only: batch ingestion accepts only score-create events. ' +
  'Upgrade the producer to an OpenTelemetry-based SDK (JS/TS SDK 5.4+ or Python SDK 4.7+, or OTLP with ' +
  'the header x-service-ingestion-version: 4), or have the service operator run write mode dual until ' +
  'every producer has moved.';

type ObservationEvent = Exclude<IngestionEvent, { type: 'trace-create' | 'score-create' | 'sdk-log' }>;

function observationTypeOf(e: ObservationEvent): ObservationType {
  if (e.type === 'observation-create' || e.type === 'observation-update') return e.body.type;
  return (
    (OBSERVATION_CREATE_TYPES as Record<string, ObservationType>)[e.type] ??
    (OBSERVATION_UPDATE_TYPES as Record<string, ObservationType>)[e.type]!
  );
}

function idOf(item: unknown): string {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.length > 0 ? id : 'unknown';
}

export async function processBatch(items: unknown[], ctx: BatchContext): Promise<BatchResult> {
  const result: BatchResult = { successes: [], errors: [] };
  const now = ctx.now ?? Date.now();
  const rc: RowContext = { projectId: ctx.projectId, now };
  const behaviour = behaviourOf(ctx.settings);
  const accepted: IngestionEvent[] = [];
  // An SDK the spec rejects in events_only (Python v2 or older, JS/TS v3 or older) is told so by name.
  const refusal = isRefusedInEventsOnly(ctx.attribution)
    ? refusalReason(ctx.attribution)
    : EVENTS_ONLY_REFUSAL;

  for (const item of items) {
    const parsed = ingestionEvent.safeParse(item);
    if (!parsed.success) {
      result.errors.push({
        id: idOf(item),
        status: 400,
        message: 'Invalid request data',
        error: describeIssues(parsed.error),
      });
    } else if (behaviour.batchAcceptsOnlyScores && parsed.data.type !== 'score-create') {
      result.errors.push({
        id: parsed.data.id,
        status: 400,
        message: 'Event type not accepted',
        error: refusal,
      });
    } else {
      accepted.push(parsed.data);
    }
  }

  const scores: Row[] = [];
  const changes = new LegacyChanges();
  for (const e of accepted) {
    if (e.type === 'score-create') scores.push(scoreRow(e.body, e.timestamp, rc, ctx.attribution));
    else if (e.type === 'trace-create') changes.addTrace(e.body.id ?? randomUUID(), e.body, e.timestamp);
    else if (e.type !== 'sdk-log') {
      // An observation without a trace gets one, as the reference SDKs expect.
      let traceId = e.body.traceId;
      if (!traceId) {
        traceId = randomUUID();
        changes.addTrace(traceId, { id: traceId, timestamp: e.body.startTime ?? e.timestamp }, e.timestamp);
      }
      changes.addObservation(e.body.id, {
        patch: e.body,
        at: e.timestamp,
        isUpdate: e.type.endsWith('-update'),
        traceId,
        type: observationTypeOf(e),
      });
    }
  }

  await acceptWrite(
    {
      projectId: ctx.projectId,
      receivedAt: now,
      attribution: ctx.attribution,
      targets: batchTargets(ctx.settings),
      virtualRoots: true,
      changes,
      scores,
      events: [],
    },
    ctx,
  );
  for (const e of accepted) result.successes.push({ id: e.id, status: 201 });
  return result;
}
