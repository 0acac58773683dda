/**
 * The web UI's JSON routes (`/api/ui`), in nested scopes whose hooks state who may reach them
 * (../ui-shell/scope.ts): sign-in is the one family outside a session; every other route is in the
 * signed-in scope (session, CSRF, write-mode gate), and within it either the user's own routes,
 * the organizations (their own scopes), the owners' migration page, or the project scope (`:projectId` of the path, the route's role).
 */
import fastifyCookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import { uiApiKeysPlugin } from '../administration/ui-api-keys.ts';
import { uiInvitationsPlugin } from '../administration/ui-invitations.ts';
import { uiMembersPlugin } from '../administration/ui-members.ts';
import { uiOrganizationsPlugin } from '../administration/ui-organizations.ts';
import { uiProjectsPlugin } from '../administration/ui-projects.ts';
import { uiAlertsPlugin } from '../alerts/ui.ts';
import { uiAnnotationQueuesPlugin } from '../annotation-queues/ui.ts';
import { modeGate } from '../core/gates.ts';
import type { PluginOptions } from '../core/plugin-options.ts';
import { uiDashboardsPlugin } from '../dashboards/ui.ts';
import { uiDatasetsPlugin } from '../datasets/ui.ts';
import { uiEvaluationsPlugin } from '../evaluations/ui.ts';
import { uiLegacyTracesPlugin } from '../legacy/ui.ts';
import { uiMaskingPlugin } from '../masking/routes.ts';
import { uiMigrationPlugin } from '../migration/ui.ts';
import { uiModelsPlugin } from '../models/ui.ts';
import { uiPromptsPlugin } from '../prompts/ui.ts';
import { uiTraceDeletionPlugin } from '../traces/deletion.ts';
import { uiTracesPlugin } from '../traces/ui.ts';
import { uiListsPlugin } from '../traces/ui-sessions-users.ts';
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
