/**
 * `POST /api/public/dataset-run-items`: links a trace (or an observation, whose trace it looks up)
 * to a dataset item within a named run. In
 * `legacy` and `dual` it records the run item; in `events_only` it writes nothing and returns the
 * stale compatibility object legacy SDKs expect, with the run id the reference derives.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { behaviourOf } from '../../../contract/write-modes.ts';
import { NotFound } from '../../../kernel/errors.ts';
import { notFound } from '../../../platform/http/answers.ts';
import { route } from '../../../platform/http/route.ts';
import { metadataMap } from '../../write-model/records.ts';
import { chTime } from '../../write-model/time.ts';
import { traceOfObservation } from '../observation-trace.ts';
import type { DatasetsRouteContext } from './context.ts';

const body = z
  .object({
    runName: z.string().min(1),
    runDescription: z.string().nullish(),
    metadata: z.unknown().nullish(),
    datasetItemId: z.string().min(1),
    observationId: z.string().nullish(),
    traceId: z.string().nullish(),
  })
  .refine((b) => b.traceId || b.observationId, {
    message: 'traceId or observationId is required',
    path: ['traceId'],
  });

/** The reference's id of the experiment a run becomes in version 4. */
export function experimentRunId(projectId: string, datasetId: string, runName: string): string {
  return createHash('sha256')
    .update(JSON.stringify(['langfuse-experiment-v1', projectId, datasetId, runName]))
    .digest('hex')
    .slice(0, 16);
}

export function datasetRunItemRoutes(app: FastifyInstance, ctx: DatasetsRouteContext): void {
  route(
    app,
    {
      method: 'POST',
      url: '/api/public/dataset-run-items',
      tag: 'Datasets',
      summary:
        'Link a trace to a dataset item in a run (events_only: a compatibility answer, nothing written)',
      body,
    },
    async ({ body: b, req }) => {
      const { projectId } = req.principal;
      const item = await ctx.pool.query<{
        dataset_id: string;
        input: unknown;
        expected_output: unknown;
        metadata: unknown;
      }>(
        'SELECT dataset_id, input, expected_output, metadata FROM dataset_items WHERE project_id = $1 AND id = $2',
        [projectId, b.datasetItemId],
      );
      const datasetItem = item.rows[0];
      if (!datasetItem) throw notFound('Dataset item', b.datasetItemId);
      const now = new Date();
      const behaviour = behaviourOf(ctx.config.mode);
      // The reference documents traceId as a string: an observation id alone names its trace.
      const traceId =
        b.traceId ||
        (await traceOfObservation(ctx.analytics, projectId, b.observationId!, behaviour.writesLegacyTables));
      if (!traceId) throw new NotFound(`Observation ${b.observationId} not found`);
      const answer = (id: string, datasetRunId: string) => ({
        id,
        datasetRunId,
        datasetRunName: b.runName,
        datasetItemId: b.datasetItemId,
        traceId,
        observationId: b.observationId ?? null,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      });

      if (!behaviour.servesLegacyEndpoints) {
        return answer(randomUUID(), experimentRunId(projectId, datasetItem.dataset_id, b.runName));
      }

      const run = await ctx.pool.query<{ id: string; created_at: Date }>(
        `INSERT INTO dataset_runs (id, project_id, dataset_id, name, description, metadata) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (dataset_id, project_id, name) DO UPDATE SET updated_at = now() RETURNING id, created_at`,
        [
          randomUUID(),
          projectId,
          datasetItem.dataset_id,
          b.runName,
          b.runDescription ?? null,
          JSON.stringify(b.metadata ?? {}),
        ],
      );
      const runRow = run.rows[0]!;
      const id = randomUUID();
      const stringify = (v: unknown) => (v == null ? null : JSON.stringify(v));
      await ctx.store.insert('dataset_run_items_rmt', [
        {
          id,
          project_id: projectId,
          dataset_run_id: runRow.id,
          dataset_item_id: b.datasetItemId,
          dataset_id: datasetItem.dataset_id,
          trace_id: traceId,
          observation_id: b.observationId ?? null,
          error: null,
          created_at: chTime(now),
          updated_at: chTime(now),
          dataset_run_name: b.runName,
          dataset_run_description: b.runDescription ?? null,
          dataset_run_metadata: {},
          dataset_run_created_at: chTime(runRow.created_at),
          dataset_item_input: stringify(datasetItem.input),
          dataset_item_expected_output: stringify(datasetItem.expected_output),
          // What an experiment evaluation rule maps as `experiment_item_metadata`.
          dataset_item_metadata: metadataMap(datasetItem.metadata),
          dataset_item_version: null,
          event_ts: chTime(now),
          is_deleted: 0,
        },
      ]);
      return answer(id, runRow.id);
    },
  );
}
