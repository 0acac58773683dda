/** What the projects' and organizations' routes need of the process. */
import type { RouteContext } from '../../../platform/http/context.ts';
import type { KeyVerifier } from '../keys.ts';

export interface ProjectsRouteContext extends RouteContext {
  /** The verified keys, cached: a revoked key is forgotten at once. */
  keys: KeyVerifier;
}
