// Everything a kind cluster here runs, built on this machine and cached (each a step with its
// time): kind itself, the kindnode binary, containerd, CoreDNS and the pause image as the local
// cluster builds them, the control-plane image, and the node image holding all of them, loaded
// into the engine when it lacks it.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { kind as kindTool, moduleDir, toolStep } from '../go-tools.ts';
import { ensureCorednsImage } from '../images/coredns-image.ts';
import { ensurePauseImage } from '../images/pause-image.ts';
import { ensureContainerd, ensureCorednsBuilt } from '../node-binaries.ts';
import type { StepReporter } from '../steps.ts';
import { ensureKindnode } from './binaries.ts';
import { ensureComponentImage } from './component-image.ts';
import { docker, engineDataRoot } from './engine.ts';
import { ensureNodeImage, nodeImageName } from './node-image.ts';

export interface KindImages {
  kind: string;
  /** kubectl of the cluster's release (the kindnode binary). */
  kindnode: string;
  nodeImage: string;
  /** An image with bash and getent (Debian minbase): the control-plane image. */
  shellImage: string;
}

export async function ensureKindImages(steps: StepReporter): Promise<KindImages> {
  const kind = await toolStep(kindTool, steps);
  const kindnode = await ensureKindnode(steps);
  const containerdDir = await ensureContainerd(steps);
  const coredns = await ensureCorednsImage(join(await ensureCorednsBuilt(steps), 'coredns'), steps);
  const pause = await ensurePauseImage(steps);
  const components = await ensureComponentImage(kindnode, steps);
  const archive = await ensureNodeImage(
    {
      kindnode,
      containerdDir,
      kindSource: await moduleDir(kindTool.module, kindTool.version),
      components,
      pause,
      coredns,
    },
    steps,
  );
  // Loaded again whenever the archive changed since the engine last loaded it.
  const { size, mtimeMs } = await stat(archive);
  const key = `${archive} ${size} ${mtimeMs}`;
  const marker = join(engineDataRoot, 'loaded-node-image');
  const loaded = (await readFile(marker, 'utf8').catch(() => '')) === key;
  if (!loaded || (await docker(['image', 'inspect', nodeImageName])).code !== 0) {
    await steps.run(`docker load ${nodeImageName}`, async () => {
      const result = await docker(['load', '--input', archive]);
      if (result.code !== 0) throw new Error(`docker load: ${result.stderr.trim()}`);
      // The node image it replaced, now untagged, would stay in the engine's store for nothing.
      await docker(['image', 'prune', '--force']);
      await writeFile(marker, key);
    });
  } else steps.cached('node image in the engine', nodeImageName);
  return { kind, kindnode, nodeImage: nodeImageName, shellImage: components.names[0]! };
}
