// The Pod sandbox ("pause") image, from the source Kubernetes ships in its module
// (build/pause/linux/pause.c) compiled static with the machine's gcc: containerd never pulls it.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BuildSpec, ensureBuilt } from '../cached-build.ts';
import { kubernetesVersion } from '../control-plane-binary.ts';
import { goBinary } from '../paths.ts';
import type { StepReporter } from '../steps.ts';
import { buildScratchImage } from './scratch-image.ts';

const run = promisify(execFile);
export const pauseImageName = 'registry.k8s.io/pause:observatory';
const archiveName = 'pause.oci.tar';

async function pauseSource(): Promise<string> {
  const { stdout } = await run(
    goBinary(),
    ['mod', 'download', '-json', `k8s.io/kubernetes@${kubernetesVersion}`],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download k8s.io/kubernetes@${kubernetesVersion}: no directory`);
  return join(dir, 'build', 'pause', 'linux', 'pause.c');
}

const spec: BuildSpec = {
  name: 'image-pause',
  label: 'pause image',
  async inputs() {
    return [await readFile(await pauseSource()), pauseImageName];
  },
  async build(out) {
    const binary = join(out, 'pause');
    await run('gcc', ['-Os', '-static', '-Wall', '-Werror', '-o', binary, await pauseSource()]);
    await buildScratchImage(
      { name: pauseImageName, binary, path: '/pause', user: '65535:65535' },
      out,
      archiveName,
    );
    return { image: pauseImageName };
  },
};

export async function ensurePauseImage(steps: StepReporter): Promise<{ name: string; archive: string }> {
  return { name: pauseImageName, archive: join(await ensureBuilt(spec, steps), archiveName) };
}
