// Images of one static binary on an empty root filesystem (the pause image, CoreDNS), committed
// with buildah from `scratch` and written as an OCI archive for containerd to import.
import { join } from 'node:path';
import { buildah } from './buildah.ts';

export interface ScratchImage {
  name: string;
  /** Static binary on this machine and its path in the image. */
  binary: string;
  path: string;
  args?: string[];
  user: string;
}

/** Commits the image and writes `<out>/<file>`; returns the archive's path. */
export async function buildScratchImage(image: ScratchImage, out: string, file: string): Promise<string> {
  const container = (await buildah(['from', 'scratch'])).trim();
  try {
    await buildah(['copy', '--chmod', '0755', container, image.binary, image.path]);
    await buildah([
      'config',
      '--entrypoint',
      JSON.stringify([image.path]),
      '--cmd',
      JSON.stringify(image.args ?? []),
      '--user',
      image.user,
      '--os',
      'linux',
      '--arch',
      'amd64',
      container,
    ]);
    await buildah(['commit', '--quiet', container, image.name]);
  } finally {
    await buildah(['rm', container]).catch(() => {});
  }
  const archive = join(out, file);
  await buildah(['push', '--quiet', image.name, `oci-archive:${archive}:${image.name}`]);
  return archive;
}
