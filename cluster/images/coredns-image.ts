// CoreDNS as an image (the binary cluster/coredns builds, on an empty root filesystem), so the
// cluster DNS runs as Pods behind the kube-dns Service like in any cluster.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type BuildSpec, ensureBuilt } from '../cached-build.ts';
import type { StepReporter } from '../steps.ts';
import { buildScratchImage } from './scratch-image.ts';

export const corednsImageName = 'registry.k8s.io/coredns/coredns:observatory';
const archiveName = 'coredns.oci.tar';

function spec(binary: string): BuildSpec {
  return {
    name: 'image-coredns',
    label: 'CoreDNS image',
    async inputs() {
      return [await readFile(binary), corednsImageName];
    },
    async build(out) {
      await buildScratchImage(
        { name: corednsImageName, binary, path: '/coredns', user: '65532:65532' },
        out,
        archiveName,
      );
      return { image: corednsImageName };
    },
  };
}

export async function ensureCorednsImage(
  binary: string,
  steps: StepReporter,
): Promise<{ name: string; archive: string }> {
  return { name: corednsImageName, archive: join(await ensureBuilt(spec(binary), steps), archiveName) };
}
