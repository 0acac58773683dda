// Debian bookworm root filesystems for the kind images, made by mmdebstrap from Debian's packages
// (minbase plus the named packages; no documentation, manuals, locales or apt lists), as the base
// image of ./Dockerfile is made (cluster/images/base-image.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const debianMirror = 'http://deb.debian.org/debian';

export interface RootfsRecipe {
  packages: string[];
  /** mmdebstrap customize hooks ("$1" is the root directory). */
  hooks: string[];
}

/** The recipe as mmdebstrap arguments; also what a build's cache key hashes. */
export function rootfsArgs(recipe: RootfsRecipe, output: string, format: 'tar' | 'directory'): string[] {
  const excluded = ['/usr/share/doc/*', '/usr/share/man/*', '/usr/share/info/*', '/usr/share/locale/*'];
  return [
    '--variant=minbase',
    '--mode=root',
    `--format=${format}`,
    '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
    '--aptopt=Acquire::Languages "none"',
    ...excluded.map((path) => `--dpkgopt=path-exclude=${path}`),
    '--dpkgopt=path-include=/usr/share/doc/*/copyright',
    `--include=${recipe.packages.join(',')}`,
    ...recipe.hooks.map((hook) => `--customize-hook=${hook}`),
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*',
    'bookworm',
    output,
    debianMirror,
  ];
}

export async function mmdebstrap(recipe: RootfsRecipe, output: string, format: 'tar' | 'directory') {
  await run(
    'nice',
    ['-n', '19', 'ionice', '-c3', 'mmdebstrap', '--quiet', ...rootfsArgs(recipe, output, format)],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`mmdebstrap failed: ${error.stderr?.slice(-4000) || error.message}`);
  });
}
