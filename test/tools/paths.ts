// Where the chart tests find the repository and where built tools are cached.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Built tools and generated schemas live in .cache/tools/<name>-<version>/ (git-ignored via .cache/). */
export const toolsCache = join(repoRoot, '.cache', 'tools');
export const chartDir = join(repoRoot, 'charts', 'observatory');
export const crdSourceDir = join(repoRoot, 'crds');

export function goBinary(): string {
  if (process.env['GO']) return process.env['GO'];
  return '/usr/local/go/bin/go';
}
