/**
 * The background migrations page (`GET /api/ui/migration`), in an owner scope (server/app/web/ui-shell/scope.ts):
 * the release and write mode (which `/api/ui/session` tells every user), then what depends on who
 * asks. A deployment admin sees the deployment: the historic backfill's steps as the worker and
 * `observatory backfill` record them, with the command and the operator annotation that retry a
 * failed one, the propagation report the worker's stuck probe gives the operator, and every
 * project's producers that `events_only` would refuse or change. Any other project owner sees
 * the producers of the projects they own and nothing of the deployment. Read-only.
 */
import type { FastifyPluginAsync } from 'fastify';
import { parseDuration } from '../../../contract/duration.ts';
import { ANNOTATIONS, annotateCommand, backfillRetryCommand } from '../../../contract/retries.ts';
import { DEFAULT_PRODUCERS_SINCE } from '../../../contract/worker-api.ts';
import { behaviourOf } from '../../../contract/write-modes.ts';
import type { Coordination } from '../../../platform/coordination/store.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import type { UiScopedOptions } from '../../../platform/http/plugin-options.ts';
import { route } from '../../../platform/http/route.ts';
import { dialectOf } from '../../../platform/migrations/schema.ts';
import { propagationReport, propagationWatched } from '../../events/propagation-record.ts';
import { upgradeAdvice } from '../../producers/advice.ts';
import { producersSince } from '../../producers/recorder.ts';
import { BackfillManager } from '../manager.ts';

export interface BackfillRouteContext extends RouteContext {
  /** The worker's coordination store, read for the propagation report; absent without REDIS_URL. */
  coordination?: Coordination | undefined;
}

export const uiMigrationPlugin: FastifyPluginAsync<UiScopedOptions<BackfillRouteContext>> = async (
  app,
  { ctx, scopes },
) => {
  scopes.owners(app, 'the background migrations page is for owners');
  // The web does not know when the worker started: a propagation that never completed a run is
  // judged from this process's start, as the worker judges it from its own.
  const startedAt = Date.now();
  const mode = ctx.config.mode;
  const operator = ctx.config.operatorObject;

  const deploymentFacts = async () => {
    const manager = new BackfillManager({
      pool: ctx.pool,
      analytics: ctx.analytics,
      dialect: dialectOf(ctx.config),
      settings: mode,
      workerId: 'web',
    });
    const [steps, propagation] = await Promise.all([
      manager.status(),
      ctx.coordination
        ? propagationReport(ctx.coordination, {
            enabled: propagationWatched(mode),
            processStartedAt: startedAt,
            thresholdMinutes: ctx.config.propagationStuckThresholdMinutes,
          })
        : null,
    ]);
    return {
      steps: steps.map((s) => ({
        ...s,
        retry:
          s.status === 'failed'
            ? {
                command: backfillRetryCommand(s.step),
                annotation: ANNOTATIONS.retryBackfill,
                value: String(s.step),
                kubectl: operator
                  ? annotateCommand(
                      operator.name,
                      ANNOTATIONS.retryBackfill,
                      String(s.step),
                      operator.namespace,
                    )
                  : null,
              }
            : null,
      })),
      propagation,
    };
  };

  route(
    app,
    {
      method: 'GET',
      url: '/api/ui/migration',
      tag: 'UI',
      summary:
        'The write mode; the backfill and propagation (deployment admins); producers (of the projects the user owns)',
    },
    async ({ req }) => {
      const { deploymentAdmin, projectIds } = req.owner;
      const since = new Date(Date.now() - parseDuration(DEFAULT_PRODUCERS_SINCE)!);
      const [deployment, producers] = await Promise.all([
        deploymentAdmin ? deploymentFacts() : { steps: null, propagation: null },
        mode.release === '4'
          ? producersSince(ctx.pool, since, deploymentAdmin ? undefined : projectIds)
          : null,
      ]);
      return {
        release: mode.release,
        writeMode: mode.writeMode,
        allowPreviewOptIn: mode.allowPreviewOptIn,
        backfillMayRun: behaviourOf(mode).backfillMayRun,
        deploymentAdmin,
        ...deployment,
        producers: producers && {
          since: producers.since,
          window: DEFAULT_PRODUCERS_SINCE,
          data: producers.producers.map((p) => ({ ...p, advice: upgradeAdvice(p) })),
          legacyEvaluators: producers.legacyEvaluators,
        },
      };
    },
  );
};
