// The Debian packages the node and the image build use, installed by cluster/host-packages.sh when
// any command is missing (apt-get update once, then install).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clusterSource } from './paths.ts';
import type { StepReporter } from './steps.ts';

const run = promisify(execFile);
const commands = ['buildah', 'mmdebstrap', 'runc', 'umoci', 'iptables', 'gcc', 'conntrack'];

async function installed(command: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${command}`]).then(
    () => true,
    () => false,
  );
}

/** `extra` maps further Debian packages to the command each provides (test/kind: docker.io). */
export async function ensureHostPackages(
  steps: StepReporter,
  extra: Record<string, string> = {},
): Promise<void> {
  const missing = [];
  for (const command of [...commands, ...Object.values(extra)])
    if (!(await installed(command))) missing.push(command);
  if (!missing.length && existsSync('/usr/lib/cni/bridge')) return steps.cached('Debian packages', '');
  await steps.run('Debian packages (apt-get)', async () => {
    await run(join(clusterSource, 'host-packages.sh'), Object.keys(extra), {
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stderr?: string; message: string }) => {
      throw new Error(`cluster/host-packages.sh: ${(error.stderr ?? '').trim() || error.message}`);
    });
  });
}
