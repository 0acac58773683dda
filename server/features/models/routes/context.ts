/** What the routes that price or change model definitions need of the process. */
import type { RouteContext } from '../../../platform/http/context.ts';
import type { ModelCatalog } from '../catalog.ts';

export interface ModelsRouteContext extends RouteContext {
  /** Each project's model definitions, cached: a change invalidates the project's. */
  models: ModelCatalog;
}
