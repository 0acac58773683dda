// buildah (Debian's package) with the project's own image store under .cache/buildah, so image
// builds leave nothing in the machine's /var/lib/containers and a wiped .cache starts clean.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot } from '../paths.ts';

const run = promisify(execFile);
const storeRoot = join(cacheRoot, 'buildah');

function globalFlags(): string[] {
  return [
    '--root',
    join(storeRoot, 'root'),
    '--runroot',
    join(storeRoot, 'run'),
    '--storage-driver',
    'overlay',
  ];
}

export async function buildah(args: string[], options: { cwd?: string } = {}): Promise<string> {
  const { stdout } = await run('buildah', [...globalFlags(), ...args], {
    cwd: options.cwd,
    maxBuffer: 256 * 1024 * 1024,
    // No proxy variables or registries from the caller's environment.
    env: {
      PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: process.env['HOME'] ?? '/root',
    },
  }).catch((error: { stderr?: string; stdout?: string; message: string }) => {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(`buildah ${args.slice(0, 2).join(' ')} failed: ${output || error.message}`);
  });
  return stdout;
}

export async function hasImage(name: string): Promise<boolean> {
  return buildah(['inspect', '--type', 'image', name]).then(
    () => true,
    () => false,
  );
}
