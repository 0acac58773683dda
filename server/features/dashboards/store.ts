/**
 * Dashboards, widgets and placements in PostgreSQL, every statement scoped by the caller's
 * project: another project's dashboard or widget is not found. Placements change under a lock on
 * their dashboard's row, so concurrent additions see each other's tiles.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { BadRequest, Conflict, NotFound } from '../../kernel/errors.ts';
import { deleteProjectRow, projectPage, projectRecords } from '../../platform/datastores/project-page.ts';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import type { FilterCondition } from '../reads/filters.ts';
import { PRESETS } from './home.ts';
import type {
  ChartConfig,
  CreateDashboard,
  CreatePlacement,
  Dashboard,
  Placement,
  TimeRange,
  UpdateDashboard,
  UpdatePlacement,
  Widget,
  WidgetDefinition,
} from './model.ts';
import { placeNew } from './model.ts';

interface DashboardRow {
  id: string;
  name: string;
  description: string;
  filters: FilterCondition[];
  default_time_range: TimeRange;
  created_at: Date;
  updated_at: Date;
}
interface PlacementRow {
  dashboard_id: string;
  id: string;
  widget_id: string | null;
  preset_id: string | null;
  x: number;
  y: number;
  x_size: number;
  y_size: number;
}
interface WidgetRow {
  id: string;
  name: string;
  description: string;
  view: WidgetDefinition['view'];
  dimensions: WidgetDefinition['dimensions'];
  metrics: WidgetDefinition['metrics'];
  filters: FilterCondition[];
  chart_type: WidgetDefinition['chartType'];
  chart_config: ChartConfig;
  created_at: Date;
  updated_at: Date;
}

type Db = pg.Pool | pg.PoolClient;

const toPlacement = (r: PlacementRow): Placement => {
  // Stored as the reference stores them (x_size, y_size), served as its public API names them.
  const pos = { id: r.id, x: r.x, y: r.y, width: r.x_size, height: r.y_size };
  return r.widget_id !== null
    ? { type: 'widget', widgetId: r.widget_id, ...pos }
    : { type: 'preset', presetId: r.preset_id ?? '', ...pos };
};

const toDashboard = (r: DashboardRow, placements: PlacementRow[]): Dashboard => ({
  id: r.id,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  name: r.name,
  description: r.description,
  definition: { widgets: placements.filter((p) => p.dashboard_id === r.id).map(toPlacement) },
  filters: r.filters,
  defaultTimeRange: r.default_time_range,
});

const toWidget = (r: WidgetRow): Widget => ({
  id: r.id,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  name: r.name,
  description: r.description,
  view: r.view,
  dimensions: r.dimensions,
  metrics: r.metrics,
  filters: r.filters,
  chartType: r.chart_type,
  chartConfig: r.chart_config,
});

async function placementsOf(db: Db, ids: string[]): Promise<PlacementRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<PlacementRow>(
    'SELECT * FROM dashboard_placements WHERE dashboard_id = ANY($1) ORDER BY y, x, id',
    [ids],
  );
  return rows;
}

/** Refuses placements naming a widget of another project or an unknown preset (`field` names them). */
async function checkPlacements(
  db: Db,
  projectId: string,
  placements: Placement[],
  field: (i: number) => string,
  missing: (message: string) => Error,
): Promise<void> {
  const widgetIds = placements.flatMap((p) => (p.type === 'widget' ? [p.widgetId] : []));
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM dashboard_widgets WHERE project_id = $1 AND id = ANY($2)',
    [projectId, widgetIds],
  );
  const known = new Set(rows.map((r) => r.id));
  const seen = new Set<string>();
  for (const [i, p] of placements.entries()) {
    if (seen.has(p.id)) throw new BadRequest(`${field(i)}.id: placement ${p.id} appears twice`);
    seen.add(p.id);
    if (p.type === 'widget' && !known.has(p.widgetId)) {
      throw missing(`${field(i)}.widgetId: widget ${p.widgetId} not found`);
    }
    if (p.type === 'preset' && !Object.hasOwn(PRESETS, p.presetId)) {
      throw missing(`${field(i)}.presetId: preset ${p.presetId} not found`);
    }
  }
}

/** A dashboard's tiles as sent in its definition: 400 naming `definition.widgets.<i>` otherwise. */
const checkDefinition = (c: Db, projectId: string, placements: Placement[]) =>
  checkPlacements(
    c,
    projectId,
    placements,
    (i) => `definition.widgets.${i}`,
    (m) => new BadRequest(m),
  );

async function writePlacements(db: Db, dashboardId: string, placements: Placement[]): Promise<void> {
  for (const p of placements) {
    await db.query(
      `INSERT INTO dashboard_placements (dashboard_id, id, widget_id, preset_id, x, y, x_size, y_size)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        dashboardId,
        p.id,
        p.type === 'widget' ? p.widgetId : null,
        p.type === 'preset' ? p.presetId : null,
        p.x,
        p.y,
        p.width,
        p.height,
      ],
    );
  }
}

export async function listDashboards(
  pool: pg.Pool,
  projectId: string,
  limit: number,
  offset: number,
): Promise<{ items: Dashboard[]; total: number }> {
  const { rows, total } = await projectPage<DashboardRow>(
    pool,
    'dashboards',
    'updated_at DESC, id',
    projectId,
    limit,
    offset,
  );
  const placements = await placementsOf(
    pool,
    rows.map((r) => r.id),
  );
  return { items: rows.map((r) => toDashboard(r, placements)), total };
}

async function dashboardRow(db: Db, projectId: string, id: string, lock = false): Promise<DashboardRow> {
  const { rows } = await db.query<DashboardRow>(
    `SELECT * FROM dashboards WHERE project_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [projectId, id],
  );
  if (!rows[0]) throw new NotFound(`dashboard ${id} not found`);
  return rows[0];
}

export async function getDashboard(db: Db, projectId: string, id: string): Promise<Dashboard> {
  const row = await dashboardRow(db, projectId, id);
  return toDashboard(row, await placementsOf(db, [id]));
}

export async function createDashboard(
  pool: pg.Pool,
  projectId: string,
  req: CreateDashboard,
): Promise<Dashboard> {
  return inTransaction(pool, async (c) => {
    const placements = req.definition?.widgets ?? [];
    await checkDefinition(c, projectId, placements);
    const id = randomUUID();
    await c.query(
      `INSERT INTO dashboards (id, project_id, name, description, filters, default_time_range)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
      [
        id,
        projectId,
        req.name,
        req.description ?? '',
        JSON.stringify(req.filters ?? []),
        req.defaultTimeRange ?? '24h',
      ],
    );
    await writePlacements(c, id, placements);
    return getDashboard(c, projectId, id);
  });
}

export async function updateDashboard(
  pool: pg.Pool,
  projectId: string,
  id: string,
  req: UpdateDashboard,
): Promise<Dashboard> {
  return inTransaction(pool, async (c) => {
    await dashboardRow(c, projectId, id, true);
    await c.query(
      `UPDATE dashboards SET name = COALESCE($3, name), description = COALESCE($4, description),
         filters = COALESCE($5::jsonb, filters), default_time_range = COALESCE($6, default_time_range), updated_at = now()
       WHERE project_id = $1 AND id = $2`,
      [
        projectId,
        id,
        req.name ?? null,
        req.description ?? null,
        req.filters ? JSON.stringify(req.filters) : null,
        req.defaultTimeRange ?? null,
      ],
    );
    if (req.definition) {
      const placements = req.definition.widgets;
      await checkDefinition(c, projectId, placements);
      await c.query('DELETE FROM dashboard_placements WHERE dashboard_id = $1', [id]);
      await writePlacements(c, id, placements);
    }
    return getDashboard(c, projectId, id);
  });
}

export async function deleteDashboard(pool: pg.Pool, projectId: string, id: string): Promise<void> {
  if (!(await deleteProjectRow(pool, 'dashboards', projectId, id))) {
    throw new NotFound(`dashboard ${id} not found`);
  }
}

/** Locks the dashboard, runs `change` on its tiles and marks it updated; the dashboard after. */
/** Runs a change of a dashboard's tiles with the dashboard locked, and marks it updated. */
const changeTiles = <T>(
  pool: pg.Pool,
  projectId: string,
  dashboardId: string,
  change: (c: pg.PoolClient) => Promise<T>,
): Promise<T> =>
  inTransaction(pool, async (c) => {
    await dashboardRow(c, projectId, dashboardId, true);
    const result = await change(c);
    await c.query('UPDATE dashboards SET updated_at = now() WHERE id = $1', [dashboardId]);
    return result;
  });

/** A tile's widget or preset must exist: 404 naming `body` otherwise. */
const checkTile = (c: Db, projectId: string, p: Placement) =>
  checkPlacements(
    c,
    projectId,
    [p],
    () => 'body',
    (m) => new NotFound(m),
  );

async function removeTile(c: Db, dashboardId: string, placementId: string): Promise<void> {
  const { rowCount } = await c.query('DELETE FROM dashboard_placements WHERE dashboard_id = $1 AND id = $2', [
    dashboardId,
    placementId,
  ]);
  if (!rowCount) throw new NotFound(`placement ${placementId} not found on dashboard ${dashboardId}`);
}

/** Adds a tile; the same placement id twice is a 409, as the reference answers. */
export const addPlacement = (pool: pg.Pool, projectId: string, dashboardId: string, req: CreatePlacement) =>
  changeTiles(pool, projectId, dashboardId, async (c): Promise<Placement> => {
    const existing = (await placementsOf(c, [dashboardId])).map(toPlacement);
    if (req.id && existing.some((p) => p.id === req.id)) {
      throw new Conflict(`placement ${req.id} already exists on dashboard ${dashboardId}`);
    }
    const p = placeNew(existing, req, randomUUID());
    await checkTile(c, projectId, p);
    await writePlacements(c, dashboardId, [p]);
    return p;
  });

/** Moves or resizes a tile: the fields given change, its content and id stay. */
export const updatePlacement = (
  pool: pg.Pool,
  projectId: string,
  dashboardId: string,
  placementId: string,
  patch: UpdatePlacement,
) =>
  changeTiles(pool, projectId, dashboardId, async (c): Promise<Placement> => {
    const { rows } = await c.query<PlacementRow>(
      `UPDATE dashboard_placements SET x = COALESCE($3, x), y = COALESCE($4, y),
              x_size = COALESCE($5, x_size), y_size = COALESCE($6, y_size)
        WHERE dashboard_id = $1 AND id = $2 RETURNING *`,
      [dashboardId, placementId, patch.x ?? null, patch.y ?? null, patch.width ?? null, patch.height ?? null],
    );
    if (!rows[0]) throw new NotFound(`placement ${placementId} not found on dashboard ${dashboardId}`);
    return toPlacement(rows[0]);
  });

export const deletePlacement = (pool: pg.Pool, projectId: string, dashboardId: string, placementId: string) =>
  changeTiles(pool, projectId, dashboardId, (c) => removeTile(c, dashboardId, placementId));

const widgets = projectRecords('dashboard_widgets', 'updated_at DESC, id', toWidget);

export const listWidgets = widgets.page;

export async function getWidget(pool: pg.Pool, projectId: string, id: string): Promise<Widget> {
  const widget = await widgets.find(pool, projectId, id);
  if (!widget) throw new NotFound(`dashboard widget ${id} not found`);
  return widget;
}

/** A widget's stored columns from `name` on ($3 to $10 of its INSERT and UPDATE). */
const widgetValues = (w: WidgetDefinition) => [
  w.name,
  w.description,
  w.view,
  JSON.stringify(w.dimensions),
  JSON.stringify(w.metrics),
  JSON.stringify(w.filters),
  w.chartType,
  JSON.stringify(w.chartConfig),
];

export async function createWidget(pool: pg.Pool, projectId: string, w: WidgetDefinition): Promise<Widget> {
  const { rows } = await pool.query<WidgetRow>(
    `INSERT INTO dashboard_widgets (id, project_id, name, description, view, dimensions, metrics, filters, chart_type, chart_config)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9, $10::jsonb) RETURNING *`,
    [randomUUID(), projectId, ...widgetValues(w)],
  );
  return toWidget(rows[0]!);
}

export async function replaceWidget(
  pool: pg.Pool,
  projectId: string,
  id: string,
  w: WidgetDefinition,
): Promise<Widget> {
  const { rows } = await pool.query<WidgetRow>(
    `UPDATE dashboard_widgets SET name = $3, description = $4, view = $5, dimensions = $6::jsonb, metrics = $7::jsonb,
       filters = $8::jsonb, chart_type = $9, chart_config = $10::jsonb, updated_at = now()
     WHERE project_id = $1 AND id = $2 RETURNING *`,
    [projectId, id, ...widgetValues(w)],
  );
  if (!rows[0]) throw new NotFound(`dashboard widget ${id} not found`);
  return toWidget(rows[0]);
}

/** A widget still placed on a dashboard is a 409 (the reference's answer); remove its tiles first. */
export async function deleteWidget(pool: pg.Pool, projectId: string, id: string): Promise<void> {
  await getWidget(pool, projectId, id);
  const placed = await pool.query<{ dashboard_id: string }>(
    'SELECT DISTINCT dashboard_id FROM dashboard_placements WHERE widget_id = $1',
    [id],
  );
  if (placed.rows.length > 0) {
    throw new Conflict(
      `dashboard widget ${id} is placed on dashboards ${placed.rows.map((r) => r.dashboard_id).join(', ')}; remove those placements first`,
    );
  }
  try {
    await pool.query('DELETE FROM dashboard_widgets WHERE project_id = $1 AND id = $2', [projectId, id]);
  } catch (err) {
    // Placed between the check and the delete: the foreign key refuses, with the same answer.
    if ((err as { code?: string }).code === '23503')
      throw new Conflict(`dashboard widget ${id} is placed on a dashboard`);
    throw err;
  }
}
