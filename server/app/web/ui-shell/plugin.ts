/**
 * The web UI's JSON routes (`/api/ui`), in nested scopes whose hooks state who may reach them
 * (../ui-shell/scope.ts): sign-in is the one family outside a session; every other route is in the
 * signed-in scope (session, CSRF, write-mode gate), and within it either the user's own routes,
 * the organizations (their own scopes), the owners' migration page, or the project scope (`:projectId` of the path, the route's role).
 */
import fastifyCookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import { modeGate } from '../core/gates.ts';
import type { PluginOptions } from '../core/plugin-options.ts';
import { uiAlertsPlugin } from '../routes/alerts/ui.ts';
import { uiAnnotationQueuesPlugin } from '../routes/annotation-queues/ui.ts';
import { uiMigrationPlugin } from '../routes/backfill/ui.ts';
import { uiDashboardsPlugin } from '../routes/dashboards/ui.ts';
import { uiDatasetsPlugin } from '../routes/datasets/ui.ts';
import { uiEvaluationsPlugin } from '../routes/evaluation/ui.ts';
import { uiLegacyTracesPlugin } from '../routes/legacy/ui.ts';
import { uiMaskingPlugin } from '../routes/masking/routes.ts';
import { uiModelsPlugin } from '../routes/models/ui.ts';
import { uiApiKeysPlugin } from '../routes/projects/ui-api-keys.ts';
import { uiOrganizationsPlugin } from '../routes/projects/ui-organizations.ts';
import { uiProjectsPlugin } from '../routes/projects/ui-projects.ts';
import { uiPromptsPlugin } from '../routes/prompts/ui.ts';
import { uiTraceDeletionPlugin } from '../routes/traces/deletion.ts';
import { uiTracesPlugin } from '../routes/traces/ui.ts';
import { uiListsPlugin } from '../routes/traces/ui-sessions-users.ts';
import { uiInvitationsPlugin } from '../routes/users/ui-invitations.ts';
import { uiMembersPlugin } from '../routes/users/ui-members.ts';
import { uiAccountPlugin } from './account.ts';
import { COOKIE_PLUGIN_OPTIONS } from './cookies.ts';
import { requireProject } from './scope.ts';
import { requireUiSession } from './session.ts';
import { uiAuthPlugin } from './sign-in.ts';

export const uiPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  // Sessions and the CSRF double submit live in cookies: parsed for every route of this scope.
  await app.register(fastifyCookie, COOKIE_PLUGIN_OPTIONS);
  app.register(uiAuthPlugin, { ctx });
  app.register(uiInvitationsPlugin, { ctx });
  app.register(async (signedIn) => {
    requireUiSession(signedIn, ctx);
    signedIn.addHook('onRequest', modeGate(ctx));
    signedIn.register(uiAccountPlugin, { ctx });
    signedIn.register(uiOrganizationsPlugin, { ctx });
    signedIn.register(uiMigrationPlugin, { ctx });
    signedIn.register(async (project) => {
      requireProject(project, ctx);
      for (const plugin of [
        uiProjectsPlugin,
        uiTracesPlugin,
        uiTraceDeletionPlugin,
        uiLegacyTracesPlugin,
        uiDatasetsPlugin,
        uiListsPlugin,
        uiDashboardsPlugin,
        uiEvaluationsPlugin,
        uiAlertsPlugin,
        uiApiKeysPlugin,
        uiMembersPlugin,
        uiPromptsPlugin,
        uiAnnotationQueuesPlugin,
        uiModelsPlugin,
        uiMaskingPlugin,
      ]) {
        project.register(plugin, { ctx });
      }
    });
  });
};
