// A second version of the app image for upgrade tests: observatory:dev with a changed label and
// environment, committed by buildah as observatory:next (the layers are shared, so it costs one
// config and one manifest) and saved as an OCI archive to import into containerd. Never pulled.
import { join } from 'node:path';
import { type BuildSpec, ensureBuilt, readRecord } from '../cached-build.ts';
import type { StepReporter } from '../steps.ts';
import { appImageName } from './app-image.ts';
import { buildah } from './buildah.ts';

export const NEXT_TAG = 'next';
export const nextImageName = appImageName.replace(/:dev$/, `:${NEXT_TAG}`);
/** Set in the image's environment, so a Pod shows which of the two versions it runs. */
export const NEXT_IMAGE_ENV = { name: 'OBSERVATORY_IMAGE_VARIANT', value: NEXT_TAG };
const archiveName = 'observatory-next.oci.tar';

const spec: BuildSpec = {
  name: 'image-observatory-next',
  label: 'image observatory:next (observatory:dev relabelled)',
  async inputs() {
    // The app image's own inputs hash: a rebuilt observatory:dev makes a new observatory:next.
    const app = await readRecord('image-observatory');
    if (!app) throw new Error('observatory:dev is not built yet');
    return [app.inputsHash, nextImageName, JSON.stringify(NEXT_IMAGE_ENV)];
  },
  async build(out, progress) {
    const container = (
      await buildah(['from', '--pull=never', '--name', `observatory-next-${process.pid}`, appImageName])
    ).trim();
    try {
      await buildah([
        'config',
        '--env',
        `${NEXT_IMAGE_ENV.name}=${NEXT_IMAGE_ENV.value}`,
        '--label',
        `org.opencontainers.image.version=${NEXT_TAG}`,
        container,
      ]);
      await buildah(['commit', '--quiet', container, nextImageName]);
    } finally {
      await buildah(['rm', container]);
    }
    progress('buildah push (OCI archive)');
    await buildah([
      'push',
      '--quiet',
      nextImageName,
      `oci-archive:${join(out, archiveName)}:${nextImageName}`,
    ]);
    return { image: nextImageName };
  },
};

/** Path of observatory:next's OCI archive, built when observatory:dev changed. */
export async function ensureNextImage(steps: StepReporter): Promise<string> {
  return join(await ensureBuilt(spec, steps), archiveName);
}
