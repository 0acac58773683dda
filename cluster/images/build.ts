// `npm run image`: builds the image observatory:dev from ./Dockerfile (and its base image on the
// first run), each build a step with its time, and prints the OCI archive's path and the size.
import { readRecord } from '../cached-build.ts';
import { ensureHostPackages } from '../host-packages.ts';
import { stepReporter } from '../steps.ts';
import { ensureAppImage } from './app-image.ts';

const steps = stepReporter((line) => console.error(line));
await ensureHostPackages(steps);
const archive = await ensureAppImage(steps);
const record = await readRecord('image-observatory');
console.error(`image ${record?.facts['image']}: ${record?.facts['size']}`);
console.log(archive);
