/**
 * The web UI's sessions and users lists (`/api/ui/projects/:projectId/sessions|users`, members),
 * derived from `events_core` and so gated like the observations table on the version 4 read path;
 * their version 3 experience (`.../legacy/sessions|users`) from the legacy `traces` and
 * `observations`, served in `legacy` and `dual` and 404 in `events_only`. Project scope.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { projectParams } from '../../../platform/http/project-routes.ts';
import { q, route } from '../../../platform/http/route.ts';
import { buildGroupingList, GROUPINGS, groupingCursor, mapGroupingRow } from '../groupings.ts';
import { buildLegacyGroupingList } from '../legacy-groupings.ts';
import { select } from '../select.ts';

const listQuery = z.object({
  fromStartTime: q.datetime().optional(),
  toStartTime: q.datetime().optional(),
  cursor: z.string().optional(),
  limit: q.int(1, 200, 50),
});

/**
 * The two read paths of the lists: version 4 over `events_core`, and the version 3 experience over
 * the legacy tables, gated like the deprecated public reads (404 in `events_only`). One row shape.
 */
const LIST_PATHS = {
  v4: { gate: 'v4-reads', prefix: '', from: 'observations', build: buildGroupingList },
  v3: { gate: 'deprecated', prefix: 'legacy/', from: 'legacy traces', build: buildLegacyGroupingList },
} as const;

export const uiListsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  for (const grouping of GROUPINGS) {
    for (const path of ['v4', 'v3'] as const) {
      const { gate, prefix, from, build } = LIST_PATHS[path];
      route(
        app,
        {
          method: 'GET',
          gate,
          url: `/api/ui/projects/:projectId/${prefix}${grouping}s`,
          tag: 'UI',
          summary: `A page of the project's ${grouping}s, derived from its ${from}`,
          params: projectParams,
          query: listQuery,
        },
        async ({ query, req }) => {
          const projectId = req.project.id;
          const rows = await select(ctx, build({ projectId, grouping, ...query }));
          const cursor = groupingCursor(rows, query.limit);
          return {
            data: rows.slice(0, query.limit).map((r) => mapGroupingRow(grouping, r)),
            meta: cursor ? { cursor } : {},
          };
        },
      );
    }
  }
};
