// Where the cluster harness finds the repository, its caches and the tools it runs.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cacheRoot = join(repoRoot, '.cache');
export const observatoryCli = join(repoRoot, 'server', 'bin', 'observatory.ts');
/** The Node binary running the harness (Node 24 via scripts/node-env.sh) also runs `node` containers. */
export const nodeBinary = process.execPath;
