/**
 * The web UI's datasets and experiments pages (`/api/ui/projects/:projectId/datasets...`, members
 * and viewers, read-only): datasets, a dataset's items, its runs, and the results of runs side by
 * side with their scores. Datasets and items are read as the public datasets API reads them
 * (../../datasets/store.ts). Runs follow the user's read path: in the version 4 one they are the
 * experiments of the events tables (as `GET /api/public/experiments`), in the version 3 one the
 * dataset runs and their run items (as the deprecated dataset-run endpoints), so nothing here
 * reads a legacy table where only version 4 is served.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NotFound } from '../../../kernel/errors.ts';
import { found } from '../../../platform/http/answers.ts';
import { familyPlugin, uiMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { buildExperimentItems, buildExperiments, mapExperiment } from '../../reads/experiments.ts';
import { buildRunItems, buildTraceOutputs } from '../../reads/legacy.ts';
import { buildRowScores, indexScores, scoresOfRow } from '../../reads/row-scores.ts';
import { orNull } from '../../reads/row-values.ts';
import { compareRuns, type RunResult } from '../../reads/run-comparison.ts';
import { type Row, select } from '../../reads/select.ts';
import { readPathOf } from '../../users/read-path.ts';
import { findDatasetById, listDatasetItems, listDatasets, listRuns } from '../store.ts';

const pageQuery = z.object(q.page(200, 50));
/** Experiments have no time of their own to bound the read; every one of the dataset is listed. */
const ALL_TIME = '1970-01-01T00:00:00.000Z';
/** Items compared on one page; a larger dataset shows its newest ones. */
const COMPARE_ITEMS = 500;
const MAX_RUN_ITEMS = 10_000;

export const uiDatasetsPlugin = familyPlugin(uiMount(), (declare, ctx) => {
  const v4 = (req: FastifyRequest) => readPathOf(ctx.config.mode, req.session.v4Preview).path === 'v4';
  const datasetOf = async (projectId: string, datasetId: string) =>
    found(await findDatasetById(ctx.pool, projectId, datasetId), 'dataset', datasetId);

  /** The runs of a dataset on the user's read path, newest first. */
  const runsOf = async (req: FastifyRequest, projectId: string, datasetId: string) => {
    if (v4(req)) {
      const rows = await select(
        ctx,
        buildExperiments({
          projectId,
          fromStartTime: ALL_TIME,
          limit: 200,
          datasetId: [datasetId],
          filters: [],
        }),
      );
      return rows.slice(0, 200).map((r) => {
        const e = mapExperiment(r, false);
        return {
          id: String(e['id']),
          name: String(e['name']),
          description: e['description'],
          createdAt: e['startTime'],
          itemCount: e['itemCount'],
        };
      });
    }
    const { rows } = await listRuns(ctx.pool, projectId, datasetId, 200, 0);
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      createdAt: r.created_at.toISOString(),
      itemCount: null,
    }));
  };

  /** Each run's result per dataset item: version 4 from the experiment items' root spans. */
  const resultsV4 = async (projectId: string, datasetId: string, runIds: string[]): Promise<RunResult[]> => {
    const rows = await select(
      ctx,
      buildExperimentItems({
        projectId,
        fromStartTime: ALL_TIME,
        limit: MAX_RUN_ITEMS,
        groups: new Set(['core', 'io']),
        experimentId: runIds,
        datasetId: [datasetId],
        filters: [],
      }),
    );
    const scores = await scoresOf(projectId, rows);
    return rows.map((r) => ({
      runId: String(r['experiment_id']),
      itemId: String(r['experiment_item_id']),
      traceId: String(r['trace_id']),
      output: orNull(r['output']) as string | null,
      scores: scoresOfRow(scores, String(r['trace_id']), String(r['span_id']), true),
    }));
  };

  /** Version 3: the run items link items to traces; a result is its trace's output and scores. */
  const resultsV3 = async (projectId: string, datasetId: string, runIds: string[]): Promise<RunResult[]> => {
    const items = (
      await Promise.all(
        runIds.map((run) => select(ctx, buildRunItems(projectId, datasetId, run, undefined).list)),
      )
    ).flat();
    // Oldest first, so an item run twice shows its first result.
    items.reverse();
    const traceIds = [...new Set(items.map((r) => String(r['trace_id'])).filter((t) => t !== ''))];
    const [outputs, scores] = await Promise.all([
      traceIds.length > 0 ? select(ctx, buildTraceOutputs(projectId, traceIds)) : [],
      scoresOf(projectId, items),
    ]);
    const outputOf = new Map(outputs.map((o) => [String(o['id']), orNull(o['output']) as string | null]));
    return items.map((r) => {
      const traceId = String(r['trace_id']);
      const observationId = orNull(r['observation_id']) as string | null;
      return {
        runId: String(r['dataset_run_id']),
        itemId: String(r['dataset_item_id']),
        traceId,
        output: outputOf.get(traceId) ?? null,
        scores: scoresOfRow(scores, traceId, observationId ?? '', true),
      };
    });
  };

  const scoresOf = async (projectId: string, rows: Row[]) => {
    const traceIds = [...new Set(rows.map((r) => String(r['trace_id'])).filter((t) => t !== ''))];
    return indexScores(traceIds.length > 0 ? await select(ctx, buildRowScores(projectId, traceIds)) : []);
  };

  declare(
    {
      method: 'GET',
      path: '/datasets',
      summary: "A page of the project's datasets",
      query: pageQuery,
    },
    async ({ query, projectId }) => listDatasets(ctx.pool, projectId, query.page, query.limit),
  );

  declare(
    {
      method: 'GET',
      path: '/datasets/:datasetId',
      summary: 'A dataset, a page of its items and its runs',
      query: pageQuery,
    },
    async ({ params, query, req, projectId }) => {
      const ds = await datasetOf(projectId, params.datasetId);
      const [items, runs] = await Promise.all([
        listDatasetItems(ctx.pool, { projectId, datasetId: ds.id }, query.page, query.limit),
        runsOf(req, projectId, ds.id),
      ]);
      return { dataset: { id: ds.id, name: ds.name, description: ds.description }, items, runs };
    },
  );

  declare(
    {
      method: 'GET',
      path: '/datasets/:datasetId/compare',
      summary: "Runs side by side: each item's result and scores per run",
      query: z.object({ runs: q.csv().pipe(z.array(z.string()).min(1).max(4)) }),
    },
    async ({ params, query, req, projectId }) => {
      const ds = await datasetOf(projectId, params.datasetId);
      const runs = (await runsOf(req, projectId, ds.id)).filter((r) => query.runs.includes(r.id));
      const missing = query.runs.filter((id) => !runs.some((r) => r.id === id));
      if (missing.length > 0) throw new NotFound(`runs: no run ${missing.join(', ')} of dataset ${ds.name}`);
      const ordered = query.runs.map((id) => runs.find((r) => r.id === id)!);
      const [items, results] = await Promise.all([
        listDatasetItems(ctx.pool, { projectId, datasetId: ds.id }, 1, COMPARE_ITEMS),
        (v4(req) ? resultsV4 : resultsV3)(projectId, ds.id, query.runs),
      ]);
      return { runs: ordered, ...compareRuns(items.data, query.runs, results) };
    },
  );
});
