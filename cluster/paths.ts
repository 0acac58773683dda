// Where the local cluster finds the repository, its sources and its build cache.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const clusterSource = join(repoRoot, 'cluster');
/** Everything built for the local cluster lives under .cache/ (git-ignored). */
export const cacheRoot = join(repoRoot, '.cache');

export function goBinary(): string {
  if (process.env['GO']) return process.env['GO'];
  return '/usr/local/go/bin/go';
}
export const controlPlaneSource = join(clusterSource, 'controlplane');
export const crdDir = join(repoRoot, 'crds');
/** The observatory CLI, run by this Node (type stripping) like the image runs it. */
export const observatoryCli = join(repoRoot, 'server', 'bin', 'observatory.ts');
/** Built tools (helm, kubeconform) live in .cache/tools/<name>-<version>/. */
export const toolsCache = join(cacheRoot, 'tools');
export const chartDir = join(repoRoot, 'charts', 'observatory');
