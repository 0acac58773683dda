// The datastores of the kind scenario as images built here, for machines with no registry:
// - PostgreSQL 15 and Redis 7 from Debian bookworm's packages, in one Debian minbase image (two
//   Deployments run it with different commands);
// - the analytics store as the project's own analytics-server: the image observatory:dev plus the
//   embedded ClickHouse engine's native library it leaves out (the optional package
//   @chdb/lib-linux-x64-gnu, copied at the version this checkout installed), running
//   `observatory analytics-server` over ClickHouse's HTTP interface.
// Both are OCI archives, cached by the hash of their inputs.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BuildSpec, ensureBuilt, readRecord } from '../cached-build.ts';
import { appImageName, ensureAppImage } from '../images/app-image.ts';
import { buildah } from '../images/buildah.ts';
import { repoRoot } from '../paths.ts';
import type { StepReporter } from '../steps.ts';
import { mmdebstrap, type RootfsRecipe, rootfsArgs } from './debian-rootfs.ts';

export const datastoreImageName = 'localhost/observatory/datastores:bookworm';
export const analyticsImageName = 'localhost/observatory/analytics-server:dev';
const datastoreArchive = 'datastores.oci.tar';
const analyticsArchive = 'analytics-server.oci.tar';
const chdbLib = join(repoRoot, 'node_modules', '@chdb', 'lib-linux-x64-gnu');

const recipe: RootfsRecipe = { packages: ['postgresql-15', 'redis-server'], hooks: [] };

const datastoreSpec: BuildSpec = {
  name: 'kind-datastores',
  label: 'PostgreSQL and Redis image (Debian packages)',
  async inputs() {
    return [datastoreImageName, ...rootfsArgs(recipe, 'rootfs.tar', 'tar')];
  },
  async build(out, progress) {
    const work = await mkdtemp(join(tmpdir(), 'observatory-kind-datastores-'));
    try {
      progress(`mmdebstrap bookworm (minbase, ${recipe.packages.join(', ')})`);
      const rootfs = join(work, 'rootfs.tar');
      await mmdebstrap(recipe, rootfs, 'tar');
      const container = (await buildah(['from', 'scratch'])).trim();
      try {
        await buildah(['add', container, rootfs, '/']);
        await buildah([
          'config',
          '--env',
          'PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
          '--os',
          'linux',
          '--arch',
          'amd64',
          container,
        ]);
        await buildah(['commit', '--quiet', container, datastoreImageName]);
      } finally {
        await buildah(['rm', container]).catch(() => {});
      }
      const archive = join(out, datastoreArchive);
      await buildah(['push', '--quiet', datastoreImageName, `oci-archive:${archive}:${datastoreImageName}`]);
      return { image: datastoreImageName, bytes: (await stat(archive)).size };
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  },
};

function analyticsSpec(appArchive: string, appArchiveHash: string): BuildSpec {
  return {
    name: 'kind-analytics-server',
    label: 'analytics-server image (observatory:dev + the embedded ClickHouse engine)',
    async inputs() {
      return [appArchiveHash, analyticsImageName, await readFile(join(chdbLib, 'package.json'))];
    },
    async build(out, progress) {
      progress(`${appImageName} + @chdb/lib-linux-x64-gnu`);
      const container = (await buildah(['from', `oci-archive:${appArchive}`])).trim();
      try {
        await buildah([
          'copy',
          '--chown',
          '0:0',
          container,
          chdbLib,
          '/app/node_modules/@chdb/lib-linux-x64-gnu',
        ]);
        await buildah([
          'config',
          '--cmd',
          JSON.stringify(['analytics-server', '--host', '0.0.0.0', '--port', '8123', '--data', '/data']),
          container,
        ]);
        await buildah(['commit', '--quiet', container, analyticsImageName]);
      } finally {
        await buildah(['rm', container]).catch(() => {});
      }
      const archive = join(out, analyticsArchive);
      await buildah(['push', '--quiet', analyticsImageName, `oci-archive:${archive}:${analyticsImageName}`]);
      return { image: analyticsImageName, bytes: (await stat(archive)).size };
    },
  };
}

interface ScenarioImages {
  app: string;
  datastores: string;
  analytics: string;
}

/** The OCI archives of observatory:dev, the datastore image and the analytics-server image. */
export async function ensureScenarioImages(steps: StepReporter): Promise<ScenarioImages> {
  const app = await ensureAppImage(steps);
  const appHash = (await readRecord('image-observatory'))?.inputsHash ?? '';
  const analytics = join(await ensureBuilt(analyticsSpec(app, appHash), steps), analyticsArchive);
  const datastores = join(await ensureBuilt(datastoreSpec, steps), datastoreArchive);
  return { app, datastores, analytics };
}
