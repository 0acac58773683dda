/**
 * Dashboards figure of `npm run bench`: the home dashboard's load as the page does it (the
 * dashboard with its tiles' definitions, then every tile's data route at once, signed-in cookie
 * session) against the sum of the same tiles' Metrics v2 queries, compiled by the same compiler
 * and sent straight to the store one after another, over the generated events of reads.ts. The
 * ratio is the web's cost on top of the queries (HTTP, session and project checks, the
 * dashboard's resolution) and the tiles' contention for the store's cores; the same tiles loaded one
 * after another separate the two. Size: BENCH_DASHBOARD_EVENTS
 * (default 100 000).
 */

import { SESSION_COOKIE } from '../../server/app/web/ui-shell/session.ts';
import { HOME_DASHBOARD, PRESETS } from '../../server/features/dashboards/home.ts';
import { widgetQuery } from '../../server/features/dashboards/model.ts';
import { buildMetrics } from '../../server/features/reads/metrics.ts';
import { METRICS_V2_VIEWS } from '../../server/features/reads/metrics-views.ts';
import { provisionUser } from '../../server/features/users/provision.ts';
import { createSession } from '../../server/features/users/store.ts';
import { openReadBench, START, stepFor } from './reads.ts';
import { line, quantile, ratio } from './report.ts';

const EVENTS = Number(process.env['BENCH_DASHBOARD_EVENTS'] ?? 100_000);
const ITERATIONS = Number(process.env['BENCH_DASHBOARD_ITERATIONS'] ?? 20);
const WARMUP = 3;
/** As the web reads: numbers as JSON numbers. */
const READ_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
} as const;

export async function benchDashboards(): Promise<void> {
  const { app, ch, pool, projects, genSeconds, close } = await openReadBench('dashboards', EVENTS);
  try {
    const project = projects[0]!;
    const { user } = await provisionUser(pool, {
      email: 'bench-dash@example.com',
      role: 'viewer',
      projectId: project.projectId,
    });
    const session = await createSession(pool, user.id, 3600_000);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const headers = {
      cookie: `${SESSION_COOKIE}=${session.token}`,
      'x-csrf-token': session.csrfToken,
      'content-type': 'application/json',
    };
    const range = {
      fromTimestamp: `${START.replace(' ', 'T')}.000Z`,
      toTimestamp: new Date(
        Date.parse(`${START.replace(' ', 'T')}Z`) + EVENTS * stepFor(EVENTS) * 1000,
      ).toISOString(),
    };
    const prefix = `${base}/api/ui/projects/${project.projectId}/dashboards/home`;
    const tiles = HOME_DASHBOARD.definition.widgets.map((p) => p.id);

    const tileRequest = async (id: string) => {
      const res = await fetch(`${prefix}/widgets/${id}/data`, {
        method: 'POST',
        headers,
        body: JSON.stringify(range),
      });
      if (res.status !== 200) throw new Error(`${id}: ${res.status} ${await res.text()}`);
      await res.json();
    };
    /** The page's load: the view, then every tile at once (`concurrent`) or one after another. */
    const loadPage = async (concurrent: boolean) => {
      const t = performance.now();
      const view = await fetch(`${prefix}/view`, { headers });
      if (view.status !== 200) throw new Error(`view: ${view.status}`);
      await view.json();
      if (concurrent) await Promise.all(tiles.map(tileRequest));
      else for (const id of tiles) await tileRequest(id);
      return performance.now() - t;
    };
    const built = Object.values(PRESETS).map((w) =>
      buildMetrics(METRICS_V2_VIEWS[w.view]!, project.projectId, widgetQuery(w, [], range)),
    );
    const sumOfQueries = async () => {
      const t = performance.now();
      for (const q of built) {
        const rs = await ch.query({
          query: q.sql,
          query_params: q.params,
          format: 'JSONEachRow',
          clickhouse_settings: READ_SETTINGS,
        });
        await rs.json();
      }
      return performance.now() - t;
    };

    const page: number[] = [];
    const serial: number[] = [];
    const store: number[] = [];
    for (let i = -WARMUP; i < ITERATIONS; i++) {
      const p = await loadPage(true);
      const one = await loadPage(false);
      const s = await sumOfQueries();
      if (i >= 0) {
        page.push(p);
        serial.push(one);
        store.push(s);
      }
    }
    process.stdout.write(
      `\nHome dashboard over ${EVENTS} events (generated in ${genSeconds.toFixed(1)} s; ${tiles.length} tiles; ${ITERATIONS} iterations)\n\n`,
    );
    const [p50, p99, s50, s99] = [
      quantile(page, 0.5),
      quantile(page, 0.99),
      quantile(store, 0.5),
      quantile(store, 0.99),
    ];
    line('home dashboard load (view + all tiles)', `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
    line(
      '  sum of its Metrics v2 queries, straight to the store',
      `p50 ${s50.toFixed(1)} ms, p99 ${s99.toFixed(1)} ms`,
    );
    line('  ratio load / sum of queries', `p50 ${ratio(p50, s50)}, p99 ${ratio(p99, s99)}`);
    // The same tiles one after another: the web's own cost per tile, without the tiles' contention.
    const [o50, o99] = [quantile(serial, 0.5), quantile(serial, 0.99)];
    line('home dashboard, tiles one after another', `p50 ${o50.toFixed(1)} ms, p99 ${o99.toFixed(1)} ms`);
    line('  ratio / sum of queries', `p50 ${ratio(o50, s50)}, p99 ${ratio(o99, s99)}`);
  } finally {
    await close();
  }
}

if (process.argv[1] === import.meta.filename) await benchDashboards();
