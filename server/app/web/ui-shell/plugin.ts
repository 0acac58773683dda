/**
 * The web UI's JSON routes (`/api/ui`), in nested scopes whose hooks state who may reach them
 * (scope.ts): sign-in is the one family outside a session; every other route is in the
 * signed-in scope (session, CSRF, write-mode gate), and within it either the user's own routes,
 * the organizations (their own scopes), the owners' migration page, or the project scope (`:projectId` of the path, the route's role).
 */
import fastifyCookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import { uiAlertsPlugin } from '../../../features/alerts/routes/ui.ts';
import { uiAnnotationQueuesPlugin } from '../../../features/annotation-queues/routes/ui.ts';
import { uiMigrationPlugin } from '../../../features/backfill/routes/ui.ts';
import { uiCommentsPlugin } from '../../../features/comments/routes/ui.ts';
import { uiDashboardsPlugin } from '../../../features/dashboards/routes/ui.ts';
import { uiDatasetsPlugin } from '../../../features/datasets/routes/ui.ts';
import { uiTraceDeletionPlugin } from '../../../features/deletion/routes/traces.ts';
import { uiEvaluationsPlugin } from '../../../features/evaluation/routes/ui.ts';
import { uiMaskingPlugin } from '../../../features/masking/routes/family.ts';
import { uiModelsPlugin } from '../../../features/models/routes/ui.ts';
import { uiApiKeysPlugin } from '../../../features/projects/routes/ui-api-keys.ts';
import { uiOrganizationsPlugin } from '../../../features/projects/routes/ui-organizations.ts';
import { uiProjectsPlugin } from '../../../features/projects/routes/ui-projects.ts';
import { uiPromptsPlugin } from '../../../features/prompts/routes/ui.ts';
import { uiLegacyTracesPlugin } from '../../../features/reads/routes/legacy-ui.ts';
import { uiListsPlugin } from '../../../features/reads/routes/ui-sessions-users.ts';
import { uiTracesPlugin } from '../../../features/reads/routes/ui-trace.ts';
import { uiScoresPlugin } from '../../../features/scores/routes/ui.ts';
import { uiMembersPlugin } from '../../../features/users/routes/ui-members.ts';
import { modeGate } from '../../../platform/http/gates.ts';
import type { PluginOptions, UiScopes } from '../../../platform/http/plugin-options.ts';
import type { WebContext } from '../core/context.ts';
import { registerFamilies } from '../core/error-handler.ts';
import { uiAccountPlugin } from './account.ts';
import { COOKIE_PLUGIN_OPTIONS } from './cookies.ts';
import { uiInvitationsPlugin } from './invitations.ts';
import { requireOrganization, requireOwner, requireProject } from './scope.ts';
import { requireUiSession } from './session.ts';
import { uiAuthPlugin } from './sign-in.ts';

export const uiPlugin: FastifyPluginAsync<PluginOptions<WebContext>> = async (app, { ctx }) => {
  const scopes: UiScopes = {
    owners: (scope, refusal) => requireOwner(scope, ctx, refusal),
    organization: (scope) => requireOrganization(scope, ctx),
  };
  // Sessions and the CSRF double submit live in cookies: parsed for every route of this scope.
  await app.register(fastifyCookie, COOKIE_PLUGIN_OPTIONS);
  app.register(uiAuthPlugin, { ctx });
  app.register(uiInvitationsPlugin, { ctx });
  app.register(async (signedIn) => {
    requireUiSession(signedIn, ctx);
    signedIn.addHook('onRequest', modeGate(ctx));
    signedIn.register(uiAccountPlugin, { ctx });
    signedIn.register(uiOrganizationsPlugin, { ctx, scopes });
    signedIn.register(uiMigrationPlugin, { ctx, scopes });
    signedIn.register(async (project) => {
      requireProject(project, ctx);
      registerFamilies(
        project,
        ctx,
        [
          uiProjectsPlugin,
          uiTracesPlugin,
          uiScoresPlugin,
          uiCommentsPlugin,
          uiTraceDeletionPlugin,
          uiLegacyTracesPlugin,
          uiDatasetsPlugin,
          uiListsPlugin,
          uiDashboardsPlugin,
          uiAlertsPlugin,
          uiApiKeysPlugin,
          uiMembersPlugin,
          uiPromptsPlugin,
          uiAnnotationQueuesPlugin,
          uiModelsPlugin,
        ],
        // Evaluation and masking answer the unstable API's envelope, as their public routes do.
        [uiEvaluationsPlugin, uiMaskingPlugin],
      );
    });
  });
};
