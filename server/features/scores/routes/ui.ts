/**
 * The scores the web UI's trace view adds (`/api/ui/projects/:projectId/...`): the score configs an
 * annotator picks from, and a score by the signed-in user through the same service as
 * `POST /api/public/scores`. Viewers read, owners and members write.
 */
import { z } from 'zod';
import { BadRequest } from '../../../kernel/errors.ts';
import { familyPlugin, uiMount } from '../../../platform/http/project-routes.ts';
import { SERVICE_VERSION } from '../../../platform/http/version.ts';
import { acceptDepsOf, type IngestionRouteContext } from '../../ingestion/routes/context.ts';
import { writeApiScores } from '../api-scores.ts';
import { findConfig, listConfigs } from '../config-store.ts';

export const uiScoresPlugin = familyPlugin<IngestionRouteContext>(uiMount(), (declare, ctx) => {
  declare(
    {
      method: 'GET',
      path: '/score-configs',
      summary: "The project's score configs an annotator can score with (archived ones left out)",
    },
    async ({ projectId }) => {
      const { items: configs } = await listConfigs(ctx.pool, projectId, 100, 0);
      return { data: configs.filter((c) => !c.isArchived) };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/scores',
      summary:
        'Add a score, as POST /api/public/scores, by the signed-in user: ANNOTATION with a score config (as the reference annotates), API without',
      role: { atLeast: 'member', refusal: 'viewers cannot add scores' },
      body: z.record(z.string(), z.unknown()),
    },
    async ({ body, req, projectId }) => {
      const source = body['configId'] ? 'ANNOTATION' : 'API';
      const result = await writeApiScores([{ ...body, source }], {
        projectId,
        authorUserId: req.session.user.id,
        attribution: { apiKey: '', sdkName: 'observatory-ui', sdkVersion: SERVICE_VERSION },
        ...acceptDepsOf(ctx),
        findConfig: (id) => findConfig(ctx.pool, projectId, id),
      });
      if (result.errors[0]) throw new BadRequest(result.errors[0].message);
      return { id: result.ids[0] };
    },
  );
});
