/**
 * UI figure of `npm run bench`: the observations page's data route (`/api/ui/projects/:id/
 * observations`, signed-in cookie session) against the same query through the public
 * Observations API v2 (Basic auth), over the same generated events (reads.ts), as ratios of p50
 * and p99 UI / API:
 *   - the first page: one row per trace (`isRootObservation = true`), newest first, 50 rows;
 *   - a filtered page: roots of one name in one environment within a time range;
 *   - full-text search: the UI's search (input, output and metadata, with the match snippet read
 *     from `events_full`) against API v2's `matches` on input, for a token one event in a
 *     thousand carries.
 * The UI adds the rows' scores and, for a search, the snippet. Size: BENCH_UI_EVENTS (default
 * 100 000, about two minutes on two busy cores); `--ui-1m` measures 1 000 000 events instead.
 */

import { SESSION_COOKIE } from '../../server/app/web/ui-shell/session.ts';
import type { FilterCondition } from '../../server/features/reads/filters.ts';
import { provisionUser } from '../../server/features/users/provision.ts';
import { createSession } from '../../server/features/users/store.ts';
import { openReadBench, PROJECT_SHARES, SPANS_PER_TRACE, START, stepFor } from './reads.ts';
import { line, quantile } from './report.ts';

const EVENTS = process.argv.includes('--ui-1m')
  ? 1_000_000
  : Number(process.env['BENCH_UI_EVENTS'] ?? 100_000);
const ITERATIONS = Number(process.env['BENCH_UI_ITERATIONS'] ?? 20);
/** The table's field groups, asked of the API too so both read the same columns. */
const TABLE_FIELDS = 'core,basic,model,usage,metrics,trace_context';

interface PageCase {
  ui: (i: number) => Record<string, string>;
  api: (i: number) => Record<string, string>;
}

export async function benchUi(): Promise<void> {
  const { app, pool, projects, genSeconds, close } = await openReadBench('ui', EVENTS);
  try {
    const project = projects[0]!;
    const { user } = await provisionUser(pool, {
      email: 'bench@example.com',
      role: 'viewer',
      projectId: project.projectId,
    });
    const session = await createSession(pool, user.id, 3600_000);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const uiHeaders = { cookie: `${SESSION_COOKIE}=${session.token}` };
    const apiHeaders = {
      authorization: `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`,
    };

    const fromIso = '2026-07-01T00:00:00.000Z';
    const toIso = new Date(
      Date.parse(`${START.replace(' ', 'T')}Z`) + EVENTS * stepFor(EVENTS) * 1000,
    ).toISOString();
    const root: FilterCondition = {
      type: 'boolean',
      column: 'isRootObservation',
      operator: '=',
      value: true,
    };
    // Roots are events number % 5 = 0, named op-(number % 20): op-0, op-5, op-10, op-15.
    const filtered = (i: number): FilterCondition[] => [
      root,
      { type: 'string', column: 'name', operator: '=', value: `op-${(i % 4) * 5}` },
      { type: 'stringOptions', column: 'environment', operator: 'any of', value: ['prod'] },
      { type: 'datetime', column: 'startTime', operator: '>=', value: fromIso },
      { type: 'datetime', column: 'startTime', operator: '<', value: toIso },
    ];
    // Tokens of the largest project's events (number % 50 < 35), as reads.ts picks them.
    const topic = (i: number) => {
      const n = (i * 13) % 1000;
      return `topic${n - (n % 50) + (n % (SPANS_PER_TRACE * PROJECT_SHARES[0]!))}`;
    };
    const apiPage = (filters: FilterCondition[]) => ({
      fields: TABLE_FIELDS,
      limit: '50',
      filter: JSON.stringify(filters),
    });
    const cases: Record<string, PageCase> = {
      'first page (one row per trace), 50 rows': {
        ui: () => ({ filter: JSON.stringify([root]), limit: '50' }),
        api: () => apiPage([root]),
      },
      'filtered page (root, name, env, range)': {
        ui: (i) => ({ filter: JSON.stringify(filtered(i)), limit: '50' }),
        api: (i) => apiPage(filtered(i)),
      },
      'full-text search (UI: input, output, metadata)': {
        ui: (i) => ({ filter: '[]', search: topic(i), limit: '50' }),
        api: (i) => apiPage([{ type: 'string', column: 'input', operator: 'matches', value: topic(i) }]),
      },
    };

    const timed = async (path: string, headers: Record<string, string>) => {
      const t = performance.now();
      const res = await fetch(`${base}${path}`, { headers });
      const body = (await res.json()) as { data?: unknown[] };
      const ms = performance.now() - t;
      if (res.status !== 200 || !body.data || body.data.length === 0)
        throw new Error(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      return ms;
    };
    process.stdout.write(
      `\nObservations page over ${EVENTS} events (${Math.floor(EVENTS / SPANS_PER_TRACE)} traces in 3 projects at 70/20/10 %; generated in ${genSeconds.toFixed(1)} s; ${ITERATIONS} iterations)\n\n`,
    );
    for (const [label, c] of Object.entries(cases)) {
      const ui: number[] = [];
      const api: number[] = [];
      for (let i = -5; i < ITERATIONS; i++) {
        const uiMs = await timed(
          `/api/ui/projects/${project.projectId}/observations?${new URLSearchParams(c.ui(i + 100))}`,
          uiHeaders,
        );
        const apiMs = await timed(
          `/api/public/v2/observations?${new URLSearchParams(c.api(i + 100))}`,
          apiHeaders,
        );
        if (i >= 0) {
          ui.push(uiMs);
          api.push(apiMs);
        }
      }
      const [u50, u99, a50, a99] = [
        quantile(ui, 0.5),
        quantile(ui, 0.99),
        quantile(api, 0.5),
        quantile(api, 0.99),
      ];
      line(label, `UI p50 ${u50.toFixed(1)} ms, p99 ${u99.toFixed(1)} ms`);
      line('  same query through API v2', `p50 ${a50.toFixed(1)} ms, p99 ${a99.toFixed(1)} ms`);
      line('  ratio UI / API', `p50 ${(u50 / a50).toFixed(2)}, p99 ${(u99 / a99).toFixed(2)}`);
    }
  } finally {
    await close();
  }
}

if (process.argv[1] === import.meta.filename) await benchUi();
