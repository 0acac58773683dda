/** `npm run generate:crds`: writes the CRD rendered from operator/api/v1alpha1.ts to crds/. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRD_FILE, renderCrdYaml } from './crd.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const target = join(root, CRD_FILE);
await mkdir(dirname(target), { recursive: true });
await writeFile(target, renderCrdYaml());
process.stdout.write(`wrote ${CRD_FILE}\n`);
