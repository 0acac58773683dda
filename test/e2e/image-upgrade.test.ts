/**
 * Upgrades within release 4 on the real node, between images built here that differ by one
 * analytics migration (test/fixtures/scenario/migration-images.ts). A deployment in Legacy on
 * observatory:dev (schema 47) is moved to an image whose migration fails: the operator records the
 * failure, rewinds the schema with that image's down step, keeps web and worker on the previous
 * image (they never leave it, watched throughout) and says so in its status and a Warning event.
 * Then to an image whose migration succeeds: preflight, migration, rolling update, and the status
 * names the image before it. The schema is read from the analytics store itself each time.
 */
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDeployment, localPlatform } from '../../cluster/scenario/local-deployment.ts';
import {
  applySpec,
  condition,
  isTrue,
  type Obsvc,
  type Platform,
  SPECS,
} from '../../cluster/scenario/scenario.ts';
import { sleep, waitFor } from '../../cluster/wait.ts';
import type { ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import { localCluster } from '../cluster/testing.ts';
import { importVariantImage } from '../fixtures/scenario/app-variant.ts';
import { BROKEN_IMAGE, PROBE_IMAGE, PROBE_TABLE } from '../fixtures/scenario/migration-images.ts';

const NAME = 'upgraded';
const NS = 'obs-image';
const DEV = 'observatory:dev';

let d: LocalDeployment;
let p: Platform;
let probeImage: string;
let brokenImage: string;

const status = (o: Obsvc) => (o.status ?? {}) as ObservabilityServiceStatus;

beforeAll(async () => {
  d = await LocalDeployment.start(localCluster(), NS);
  await d.installChart();
  p = localPlatform(d);
  const log = (line: string) => console.log(line);
  probeImage = await importVariantImage(d.cluster, PROBE_IMAGE, log);
  brokenImage = await importVariantImage(d.cluster, BROKEN_IMAGE, log);
}, 600_000);
afterAll(async () => {
  await d?.stop();
}, 600_000);

async function schema(): Promise<{ version: number; dirty: number; probe: number }> {
  const [state] = await p.query<{ version: string; dirty: number }>(
    'SELECT argMax(version, sequence) AS version, argMax(dirty, sequence) AS dirty FROM schema_migrations',
  );
  const [probe] = await p.query<{ n: string }>(
    `SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = '${PROBE_TABLE}'`,
  );
  return { version: Number(state?.version), dirty: Number(state?.dirty), probe: Number(probe?.n) };
}

/** The last `n` entries of the migration runner's log in the store: [version, dirty] in order. */
async function migrationLog(n: number): Promise<[number, number][]> {
  const rows = await p.query<{ version: string; dirty: number }>(
    `SELECT version, dirty FROM schema_migrations ORDER BY sequence DESC LIMIT ${n}`,
  );
  return rows.map((r) => [Number(r.version), Number(r.dirty)] as [number, number]).reverse();
}

/** The images web's and worker's Deployments and live Pods name, polled until stopped. */
function watchImages(): { stop: () => Promise<Set<string>> } {
  const seen = new Set<string>();
  const apps = d.cluster.kubeconfig.makeApiClient(AppsV1Api);
  const core = d.cluster.kubeconfig.makeApiClient(CoreV1Api);
  let running = true;
  const loop = (async () => {
    while (running) {
      const [deployments, pods] = await Promise.all([
        apps.listNamespacedDeployment({ namespace: NS }),
        core.listNamespacedPod({
          namespace: NS,
          labelSelector: 'app.kubernetes.io/component in (web,worker)',
        }),
      ]);
      const specs = [
        ...deployments.items.map((x) => x.spec?.template.spec),
        ...pods.items.map((x) => x.spec),
      ];
      for (const spec of specs) {
        const image = spec?.containers[0]?.image;
        if (image) seen.add(image);
      }
      await sleep(500);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return seen;
    },
  };
}

/** Waits until the one web and the one worker Pod left both run `image`. */
async function podsOn(image: string): Promise<void> {
  const images = async () =>
    (await Promise.all([d.pods('web'), d.pods('worker')]))
      .flat()
      .map((pod) => pod.spec?.containers[0]?.image);
  await waitFor(`web and worker Pods on ${image}`, async () => {
    const now = await images();
    return now.length === 2 && now.every((x) => x === image) ? true : undefined;
  });
}

function warnings(reason: string): string[] {
  return d
    .events(`involvedObject.name=${NAME},reason=${reason}`)
    .filter((e) => e.type === 'Warning')
    .map((e) => e.message);
}

describe('image upgrades within release 4, on the real node', () => {
  it('runs Legacy on observatory:dev at the schema version it knows', async () => {
    applySpec(p, NAME, SPECS.legacy);
    const o = await d.waitFor(
      NAME,
      'Legacy and Ready',
      (x) => x.status?.state === 'Legacy' && isTrue(x, 'Ready'),
    );
    expect(o.status).toMatchObject({ deployedImage: DEV });
    expect(await schema()).toEqual({ version: 47, dirty: 0, probe: 0 });
  });

  it('rolls a failed migration back: schema rewound, web and worker never leave the previous image', async () => {
    const images = watchImages();
    applySpec(p, NAME, { ...SPECS.legacy, image: brokenImage });
    const o = await d.waitFor(
      NAME,
      'the failed upgrade recorded',
      (x) =>
        status(x).failedUpgrade?.image === brokenImage &&
        condition(x, 'SchemaMigrated')?.reason === 'SchemaUpToDate',
    );
    expect([...(await images.stop())].sort()).toEqual([DEV]);
    expect(o.status).toMatchObject({
      deployedImage: DEV,
      target: { image: DEV },
      failedUpgrade: { image: brokenImage, schemaVersion: 47 },
    });
    expect(status(o).failedUpgrade?.reason).toMatch(/BackoffLimitExceeded/);
    // The store's own account: the broken image's migration 48 started and stopped dirty, its down
    // step ran from there and left 47 clean, with the table its first statement made dropped.
    expect(await migrationLog(3)).toEqual([
      [48, 1],
      [48, 1],
      [47, 0],
    ]);
    expect(await schema()).toEqual({ version: 47, dirty: 0, probe: 0 });
    const [rolledBack] = warnings('UpgradeRolledBack');
    expect(rolledBack).toContain(`the upgrade to ${brokenImage} was rolled back`);
    expect(warnings('UpgradeMigrationFailed')).toHaveLength(1);
    // Stalled until spec.image changes (the failed image is not retried), and still serving on the
    // previous image meanwhile.
    const held = await d.waitFor(NAME, 'Stalled on the failed upgrade', (x) => isTrue(x, 'Stalled'));
    expect(condition(held, 'Stalled')).toMatchObject({ reason: 'UpgradeFailed' });
    expect(condition(held, 'Ready')).toMatchObject({ status: 'False' });
    await podsOn(DEV);
    const health = await fetch(`${await d.webUrl()}/api/public/health`);
    expect(health.status).toBe(200);
  });

  it('upgrades to an image whose migration succeeds: migrated, rolled out, the image before it named', async () => {
    applySpec(p, NAME, { ...SPECS.legacy, image: probeImage });
    const o = await d.waitFor(
      NAME,
      `${probeImage} rolled out and Ready`,
      (x) => status(x).deployedImage === probeImage && isTrue(x, 'Ready'),
    );
    expect(o.status).toMatchObject({ state: 'Legacy', previousImage: DEV });
    expect(status(o).failedUpgrade).toBeUndefined();
    expect(await schema()).toEqual({ version: 48, dirty: 0, probe: 1 });
    expect(await migrationLog(2)).toEqual([
      [48, 1],
      [48, 0],
    ]);
    await podsOn(probeImage);
  });
});
