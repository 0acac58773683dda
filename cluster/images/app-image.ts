// The image every role of Observatory runs in the cluster, built by buildah from the repository's
// own ./Dockerfile on the locally made base image. Cached by the hash of the build context (the
// files .dockerignore lets in) and the Dockerfile; buildah's layer cache keeps a rebuild after a
// source edit to seconds (the dependency layer is reused while package*.json are unchanged).
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { type BuildSpec, ensureBuilt } from '../cached-build.ts';
import { repoRoot } from '../paths.ts';
import type { StepReporter } from '../steps.ts';
import { ensureBaseImage } from './base-image.ts';
import { buildah } from './buildah.ts';

export const appImageName = 'docker.io/library/observatory:dev';
export const appArchive = 'observatory.oci.tar';
/** The CA bundle npm inside the build trusts: the machine's (its registry traffic may be re-signed). */
const hostCaBundle = '/etc/ssl/certs/ca-certificates.crt';

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await walk(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

/** Built in the image, never sent: the bundles' outputs on this machine. */
const builtHere = ['server/app/ui/dist/', 'operator/dist/'];

/**
 * The build context as .dockerignore shapes it: the manifests, server/ and operator/ without tests
 * or local build outputs, and the scripts that build the bundles in the image.
 */
export async function contextFiles(): Promise<string[]> {
  const sources = [...(await walk(join(repoRoot, 'server'))), ...(await walk(join(repoRoot, 'operator')))];
  return [
    'Dockerfile',
    '.dockerignore',
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'scripts/build-ui.ts',
    'scripts/build-operator.ts',
    ...sources
      .map((f) => relative(repoRoot, f))
      .filter((f) => !f.endsWith('.test.ts') && !builtHere.some((dir) => f.startsWith(dir))),
  ].sort();
}

function spec(base: string): BuildSpec {
  return {
    name: 'image-observatory',
    label: 'image observatory:dev (./Dockerfile)',
    async inputs() {
      const parts: (string | Buffer)[] = [await readFile(new URL(import.meta.url)), base];
      for (const file of await contextFiles()) parts.push(file, await readFile(join(repoRoot, file)));
      return parts;
    },
    async build(out, progress) {
      // npm in the deps stage reads its global npmrc (/usr/local/etc/npmrc): the CA bundle's path.
      const npmrc = join(out, 'npmrc');
      await writeFile(npmrc, 'cafile=/etc/ssl/host-ca.crt\n');
      progress('buildah build (npm install in the deps stage on a cold cache)');
      try {
        await buildah(
          [
            'build',
            '--layers',
            '--pull=never',
            // The deps stage reaches the npm registry as this machine does; nothing else runs there.
            '--network=host',
            `--volume=${hostCaBundle}:/etc/ssl/host-ca.crt:ro`,
            `--volume=${npmrc}:/usr/local/etc/npmrc:ro`,
            `--build-arg=NODE_IMAGE=${base}`,
            '--tag',
            appImageName,
            '--file',
            'Dockerfile',
            '.',
          ],
          { cwd: repoRoot },
        );
      } finally {
        await rm(npmrc, { force: true });
      }
      await buildah([
        'push',
        '--quiet',
        appImageName,
        `oci-archive:${join(out, appArchive)}:${appImageName}`,
      ]);
      const size = (await buildah(['images', '--format', '{{.Size}}', appImageName])).trim();
      return { image: appImageName, size, archiveBytes: (await stat(join(out, appArchive))).size };
    },
  };
}

/** Path of the image's OCI archive (to import into containerd), built when its inputs changed. */
export async function ensureAppImage(steps: StepReporter): Promise<string> {
  const base = await ensureBaseImage(steps);
  return join(await ensureBuilt(spec(base), steps), appArchive);
}
