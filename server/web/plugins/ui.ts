/**
 * The web UI's JSON routes (`/api/ui`), in nested scopes whose hooks state who may reach them
 * (../ui-scope.ts): sign-in is the one family outside a session; every other route is in the
 * signed-in scope (session, CSRF, write-mode gate), and within it either the user's own routes,
 * the owners' migration page, or the project scope (`:projectId` of the path, the route's role).
 */
import fastifyCookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import { COOKIE_PLUGIN_OPTIONS } from '../cookies.ts';
import { modeGate } from '../gates.ts';
import { requireProject } from '../ui-scope.ts';
import { requireUiSession } from '../ui-session.ts';
import { uiTraceDeletionPlugin } from './trace-deletion.ts';
import type { PluginOptions } from './types.ts';
import { uiAccountPlugin } from './ui-account.ts';
import { uiAlertsPlugin } from './ui-alerts.ts';
import { uiAnnotationQueuesPlugin } from './ui-annotation-queues.ts';
import { uiApiKeysPlugin } from './ui-api-keys.ts';
import { uiAuthPlugin } from './ui-auth.ts';
import { uiDashboardsPlugin } from './ui-dashboards.ts';
import { uiDatasetsPlugin } from './ui-datasets.ts';
import { uiEvaluationsPlugin } from './ui-evaluations.ts';
import { uiInvitationsPlugin } from './ui-invitations.ts';
import { uiLegacyTracesPlugin } from './ui-legacy-traces.ts';
import { uiListsPlugin } from './ui-lists.ts';
import { uiMembersPlugin } from './ui-members.ts';
import { uiMigrationPlugin } from './ui-migration.ts';
import { uiModelsPlugin } from './ui-models.ts';
import { uiProjectsPlugin } from './ui-projects.ts';
import { uiPromptsPlugin } from './ui-prompts.ts';
import { uiTracesPlugin } from './ui-traces.ts';

export const uiPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  // Sessions and the CSRF double submit live in cookies: parsed for every route of this scope.
  await app.register(fastifyCookie, COOKIE_PLUGIN_OPTIONS);
  app.register(uiAuthPlugin, { ctx });
  app.register(uiInvitationsPlugin, { ctx });
  app.register(async (signedIn) => {
    requireUiSession(signedIn, ctx);
    signedIn.addHook('onRequest', modeGate(ctx));
    signedIn.register(uiAccountPlugin, { ctx });
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
      ]) {
        project.register(plugin, { ctx });
      }
    });
  });
};
