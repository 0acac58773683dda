// Imports image archives into a containerd store that is not running yet (the node image's
// /var/lib/containerd), as `kind build node-image` does in its build container: a containerd of
// our own on that root with the CRI plugins off, `ctr images import` into the namespace the
// kubelet's CRI uses, pinned (the kubelet's image GC leaves them), not unpacked (the node unpacks
// on first use), then stopped.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startProcess } from '../processes.ts';
import { waitFor } from '../wait.ts';
import { must } from './run.ts';

interface Preload {
  containerdDir: string;
  root: string;
  work: string;
  archives: string[];
  /** [source, extra name] pairs tagged after the import. */
  tags: (readonly [string, string])[];
}

export async function preloadImages(p: Preload): Promise<string[]> {
  await mkdir(p.root, { recursive: true });
  await mkdir(p.work, { recursive: true });
  const socket = join(p.work, 'containerd.sock');
  const config = join(p.work, 'config.toml');
  await writeFile(
    config,
    [
      'version = 3',
      `root = "${p.root}"`,
      `state = "${join(p.work, 'state')}"`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"]',
      '[grpc]',
      `  address = "${socket}"`,
      '',
    ].join('\n'),
  );
  const containerd = startProcess({
    name: 'containerd (preload)',
    file: join(p.containerdDir, 'containerd'),
    args: ['--config', config],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    cwd: p.work,
    logPath: join(p.work, 'containerd.log'),
  });
  const ctr = (args: string[]) =>
    must(join(p.containerdDir, 'ctr'), ['--address', socket, '--namespace', 'k8s.io', ...args]);
  try {
    await waitFor('the preload containerd', () => ctr(['version']).then(() => true), {
      timeoutMs: 60_000,
      intervalMs: 300,
    });
    for (const archive of p.archives) {
      await ctr([
        'images',
        'import',
        '--label=io.cri-containerd.pinned=pinned',
        '--all-platforms',
        '--no-unpack',
        archive,
      ]);
    }
    for (const [source, name] of p.tags) await ctr(['images', 'tag', '--force', source, name]);
    return (await ctr(['images', 'list', '-q'])).trim().split('\n').filter(Boolean).sort();
  } finally {
    await containerd.stop(10_000);
  }
}
