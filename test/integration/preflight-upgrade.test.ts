/**
 * The preflight before an image upgrade on real PostgreSQL, Redis and the analytics server: the version
 * the database is at, the newest this build knows and the oldest it migrates from, in its JSON
 * document and in the termination message the operator reads; and the planner, given that message
 * on an image upgrade within release 4, records it and lets the upgrade go on.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDefaults } from '../../operator/api/effective.ts';
import { plan } from '../../operator/planner/plan.ts';
import { readSummary } from '../../operator/planner/termination.ts';
import { jobNameFor } from '../../operator/render/jobs.ts';
import {
  LATEST_SCHEMA_VERSION,
  OLDEST_UPGRADABLE_SCHEMA_VERSION,
} from '../../server/contract/schema-versions.ts';
import { preflightSummarySchema, upgradeRefusal } from '../../server/contract/upgrade.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';
import { rolledOut } from '../fixtures/operator/rolled-out.ts';
import { cli } from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

let stores: Stores & Given<{ redis: true }>;
let dir: string;

beforeAll(async () => {
  stores = await startStores({ redis: true });
  dir = mkdtempSync(join(tmpdir(), 'preflight-upgrade-'));
}, 180_000);

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopStores(stores);
});

async function preflight(name: string) {
  const file = join(dir, name);
  const run = await cli(['preflight', '--json', '--termination-log', file], stores.env);
  expect(run.code, run.stderr).toBe(0);
  return { document: JSON.parse(run.stdout), message: readFileSync(file, 'utf8') };
}

describe('observatory preflight: the schema report of an image upgrade', () => {
  it('reports the database version, the newest known and the oldest start, and the planner goes on with it', async () => {
    const migrated = await cli(['migrate', 'up'], stores.env);
    expect(migrated.code, migrated.stderr).toBe(0);
    const schema = { database: LATEST_SCHEMA_VERSION, latest: LATEST_SCHEMA_VERSION, upgradableFrom: 0 };
    expect(OLDEST_UPGRADABLE_SCHEMA_VERSION).toBe(0);
    const up = await preflight('up');
    expect(up.document).toMatchObject({ ok: true, schema });
    // The checks of the move from release 3 do not hold an upgrade within release 4 back.
    const statusOf = (name: string) =>
      (up.document.checks as { name: string; status: string }[]).find((c) => c.name === name)?.status;
    expect(statusOf('disk-headroom')).toBe('not_applicable');
    expect(statusOf('version-3-background-migrations-finished')).toBe('not_applicable');
    expect(readSummary(preflightSummarySchema, up.message)).toEqual({
      ok: true,
      summary: { ok: true, schema },
    });

    // An older database, as a deployment two versions back would have it.
    const down = await cli(['migrate', 'down', '--to', '40', '--log-wait-seconds', '0'], stores.env);
    expect(down.code, down.stderr).toBe(0);
    const older = await preflight('older');
    const report = readSummary(preflightSummarySchema, older.message);
    if (!report.ok) throw new Error(report.why);
    expect(report.summary.schema).toEqual({ ...schema, database: 40 });
    expect(upgradeRefusal(report.summary.schema)).toBeUndefined();

    // The operator's preflight step of an image upgrade, given this Job's termination message.
    const since = '2026-03-01T11:00:00.000Z';
    const o = minimalService(
      { ...minimalSpec('Dual'), image: 'observatory:next' },
      {},
      {
        state: 'Dual',
        deployedImage: 'observatory:dev',
        target: { state: 'Dual', since, image: 'observatory:next', fromImage: 'observatory:dev' },
      },
    );
    const name = jobNameFor(
      { meta: o.metadata, spec: withDefaults(o.spec) },
      { purpose: 'preflight', attempt: 0, inputs: { pass: since } },
    );
    const p = plan({
      object: o,
      world: {
        deployments: rolledOut(o, 'Dual', 'observatory:dev'),
        services: {},
        jobs: [{ name, purpose: 'preflight', outcome: 'succeeded', terminationMessage: older.message }],
        producers: { known: true, producers: [] },
        backfill: { known: true, steps: [] },
        now: new Date(since),
      },
    });
    expect(p.status.target).toMatchObject({ preflightPassed: true, schema: report.summary.schema });
    expect(p.status.conditions?.find((c) => c.type === 'PreflightPassed')).toMatchObject({
      status: 'True',
      reason: 'PreflightSucceeded',
    });
  });
});
