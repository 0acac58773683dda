// containerd for the node: its own root, state and socket under the node's data directory, no
// registry it could pull from (an empty registry configuration and proxy variables pointing at a
// closed loopback port), images only by import.
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { failOnExit } from '../control-plane.ts';
import { type Supervised, startProcess } from '../processes.ts';
import { waitFor } from '../wait.ts';
import { containerdConfig, type NodeLayout } from './configs.ts';
import { sh } from './host.ts';

export interface Containerd {
  process: Supervised;
  ctr(args: string[]): Promise<string>;
}

export async function startContainerd(
  layout: NodeLayout,
  binaries: { containerd: string; shimDir: string; ctr: string },
): Promise<Containerd> {
  await mkdir(layout.registryConfigDir, { recursive: true });
  await mkdir(join(layout.dataDir, 'containerd'), { recursive: true });
  await mkdir(layout.containerdRoot, { recursive: true });
  const config = join(layout.dataDir, 'containerd', 'config.toml');
  await writeFile(config, containerdConfig(layout));
  const closed = 'http://127.0.0.1:9';
  const process_ = startProcess({
    name: 'containerd',
    file: binaries.containerd,
    args: ['--config', config],
    env: {
      // The shim is found on PATH, next to containerd.
      PATH: `${binaries.shimDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      HTTP_PROXY: closed,
      HTTPS_PROXY: closed,
      NO_PROXY: '',
    },
    cwd: layout.dataDir,
    logPath: join(layout.dataDir, 'logs', 'containerd.log'),
  });
  const crashed = failOnExit(process_);
  crashed.catch(() => {});
  const ctr = (args: string[]) =>
    sh(binaries.ctr, ['--address', layout.containerdSocket, '--namespace', 'k8s.io', ...args]);
  await Promise.race([
    crashed,
    waitFor('containerd', () => ctr(['version']), { timeoutMs: 60_000, intervalMs: 200 }),
  ]);
  return { process: process_, ctr };
}

/** Imports an OCI archive into the namespace the kubelet uses, unless this very archive (path,
 * size, time) was imported into the same containerd root before: a warm start imports nothing. */
export async function importImage(containerd: Containerd, root: string, archive: string): Promise<string> {
  const { size, mtimeMs } = await stat(archive);
  const key = `${archive} ${size} ${mtimeMs}\n`;
  const marker = join(root, `imported-${createHash('sha256').update(archive).digest('hex').slice(0, 16)}`);
  if ((await readFile(marker, 'utf8').catch(() => '')) === key) return `${archive}: already imported`;
  const output = await containerd.ctr(['images', 'import', archive]);
  await writeFile(marker, key);
  return output;
}
