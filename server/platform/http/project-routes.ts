/**
 * A family of project routes, declared by path below a mount: the public API's (the project of
 * the API key) or the UI's project scope (where writes need a role); a family declared once may be
 * mounted on both. The mount supplies the prefix, the OpenAPI tag, the project, the family's gate
 * and, for a write (any method but GET), the role; a route's params default to the ids its path
 * names.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { found, notFound } from './answers.ts';
import type { RouteContext } from './context.ts';
import type { Gate } from './gates.ts';
import type { PluginOptions } from './plugin-options.ts';
import { type Empty, type Parsed, q, type RoleNeed, type RouteSpec, route } from './route.ts';

export interface ProjectMount {
  /** `/api/public…` or `/api/ui/projects/:projectId`. */
  prefix: string;
  tag: string;
  projectOf: (req: FastifyRequest) => string;
  /** The least role a write needs, where the mount has roles. */
  write?: RoleNeed;
  /** Which deployments serve the family's routes (gates.ts), unless a route names its own. */
  gate?: Gate;
}

/** The public API's mount: the project is the API key's. */
export const publicMount = (prefix: string, tag: string, gate?: Gate): ProjectMount => ({
  prefix,
  tag,
  projectOf: (req) => req.principal.projectId,
  ...(gate ? { gate } : {}),
});

/** The UI's mount in the project scope: the project is the path's, writes need `write` where given. */
export const uiMount = (write?: RoleNeed): ProjectMount => ({
  prefix: '/api/ui/projects/:projectId',
  tag: 'UI',
  projectOf: (req) => req.project.id,
  ...(write ? { write } : {}),
});

type ProjectSpec<Path extends string, P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = Omit<
  RouteSpec<P, Q, B>,
  'url' | 'tag'
> & {
  /** Below the mount's prefix. */
  path: Path;
};

/** The names of a path's `:parameters`. */
type ParamNames<Path extends string> = Path extends `${string}:${infer Rest}`
  ? Rest extends `${infer Name}/${infer Tail}`
    ? Name | ParamNames<Tail>
    : Rest
  : never;

/** The schema of a path whose parameters are all ids: each a non-empty string. */
type PathIds<Path extends string> = z.ZodObject<{ [Name in ParamNames<Path>]: z.ZodString }>;

/** A route's params where it declares none: the ids its path names (a path without any has none). */
function pathIds<Path extends string>(path: Path): PathIds<Path> | undefined {
  const names = [...path.matchAll(/:(\w+)/g)].map(([, name]) => [name, z.string().min(1)]);
  return names.length > 0 ? (z.object(Object.fromEntries(names)) as PathIds<Path>) : undefined;
}

type ProjectInput<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = Parsed<P, Q, B> & {
  projectId: string;
};

/**
 * Declares the routes of a family on a mount: `declare({ method, path, summary, ... }, handler)`,
 * `declare.lookup(...)` and `declare.deletion(...)` for the `GET` and `DELETE` of one entity,
 * `declare.listing(...)` for a page of them.
 */
export function projectRoutes(app: FastifyInstance, mount: ProjectMount) {
  const declare = <
    Path extends string,
    P extends z.ZodType = PathIds<Path>,
    Q extends z.ZodType = Empty,
    B extends z.ZodType = z.ZodUnknown,
  >(
    { path, ...spec }: ProjectSpec<Path, P, Q, B>,
    handler: (input: ProjectInput<P, Q, B>) => Promise<unknown>,
  ): void =>
    route<P, Q, B>(
      app,
      {
        ...spec,
        ...(spec.params ? {} : { params: pathIds(path) as P | undefined }),
        url: `${mount.prefix}${path}`,
        tag: mount.tag,
        ...(mount.gate && !spec.gate ? { gate: mount.gate } : {}),
        ...(spec.method !== 'GET' && mount.write && !spec.role ? { role: mount.write } : {}),
      },
      (input) => handler({ ...input, projectId: mount.projectOf(input.req) }),
    );

  type EntitySpec<Path extends string, P extends z.ZodType> = {
    path: Path;
    summary: string;
    params?: P;
    response?: z.ZodType;
  };
  /** The id of the entity a route acts on: the value of its path's last parameter. */
  const entityId = (path: string, params: unknown) =>
    (params as Record<string, string>)[path.slice(path.lastIndexOf(':') + 1)]!;

  /**
   * `GET path` of the entity the path's last parameter names: what `find` answers, presented by
   * `present`, or the 404 of `what` when it answers none.
   */
  const lookup = <Path extends string, T, P extends z.ZodType = PathIds<Path>>(
    spec: EntitySpec<Path, P>,
    what: string,
    find: (input: ProjectInput<P, Empty, z.ZodUnknown>) => Promise<T | null | undefined>,
    present: (entity: T) => unknown = (entity) => entity,
  ): void =>
    declare<Path, P>({ method: 'GET', ...spec }, async (input) =>
      present(found(await find(input), what, entityId(spec.path, input.params))),
    );

  /**
   * `DELETE path` of the entity the path's last parameter names: answers `{message: '<what>
   * successfully deleted'}`, or the 404 of `what` when `remove` answers false (a store may also
   * throw a 404 or 409 of its own).
   */
  const deletion = <Path extends string, P extends z.ZodType = PathIds<Path>>(
    spec: EntitySpec<Path, P>,
    what: string,
    remove: (input: ProjectInput<P, Empty, z.ZodUnknown>) => Promise<unknown>,
  ): void =>
    declare<Path, P>({ method: 'DELETE', ...spec }, async (input) => {
      if ((await remove(input)) === false) throw notFound(what, entityId(spec.path, input.params));
      return { message: `${what} successfully deleted` };
    });

  /**
   * `GET path`, a page of the project's entities in the shape `{data, meta}`: `list` answers the
   * page's items (each presented by `present`) and their total; the query is `?page=&limit=` unless
   * the spec names one with more filters.
   */
  const listing = <
    Path extends string,
    T,
    Q extends z.ZodType<{ page: number; limit: number }> = typeof pageQuery,
    P extends z.ZodType = PathIds<Path>,
  >(
    spec: EntitySpec<Path, P> & { query?: Q },
    list: (
      input: ProjectInput<P, Q, z.ZodUnknown>,
      limit: number,
      offset: number,
    ) => Promise<{ items: T[]; total: number }>,
    present: (item: T) => unknown = (item) => item,
  ): void =>
    declare<Path, P, Q>({ method: 'GET', query: pageQuery as z.ZodType as Q, ...spec }, async (input) => {
      const { items, total } = await list(input, input.query.limit, offsetOf(input.query));
      return paged(input.query, await Promise.all(items.map((item) => present(item))), total);
    });

  return Object.assign(declare, { lookup, deletion, listing });
}

/** The plugin of a family whose routes are all declared on `mount`. */
export const familyPlugin =
  <Context extends RouteContext>(
    mount: ProjectMount,
    declareRoutes: (declare: Declare, ctx: Context) => void,
  ): FastifyPluginAsync<PluginOptions<Context>> =>
  async (app, { ctx }) =>
    declareRoutes(projectRoutes(app, mount), ctx);

/** The route declarer of a mount, as `projectRoutes` answers it. */
export type Declare = ReturnType<typeof projectRoutes>;

/** The path parameters of a project route. */
export const projectParams = z.object({ projectId: z.string().min(1) });

/** `?page=&limit=` of the paged lists, 1-based. */
export const pageQuery = z.object(q.page(100, 50));

/** The rows a page skips. */
export const offsetOf = (p: { page: number; limit: number }) => (p.page - 1) * p.limit;

/** Page metadata of the page-numbered APIs. */
export function pageMeta(page: number, limit: number, totalItems: number) {
  return { page, limit, totalItems, totalPages: Math.ceil(totalItems / limit) };
}

/** A page of a list in the reference's shape `{data, meta}`. */
export const paged = <T>(p: { page: number; limit: number }, data: T[], total: number) => ({
  data,
  meta: pageMeta(p.page, p.limit, total),
});

/** The documented `meta` of a page. */
const pageMetaResponse = z.object({
  page: z.number(),
  limit: z.number(),
  totalItems: z.number(),
  totalPages: z.number(),
});

/** The documented response of a page of `item`s, as `paged` answers it. */
export const pageResponse = (item: z.ZodType) => z.object({ data: z.array(item), meta: pageMetaResponse });
