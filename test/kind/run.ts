/**
 * `npm run test:kind`: a kind cluster on this machine with no packet leaving it, then the upgrade
 * scenario on it (test/kind/scenario.ts). Every part is built here and cached: the Docker engine
 * from Debian (docker.io), kind from the Go module proxy, the node image and the images it preloads
 * (cluster/kind/). The nodes' network forwards nothing off the machine and nothing resolves
 * outside names: the run checks that from the node and from a Pod before the scenario. At the end
 * the cluster is deleted, the engine this run started is stopped and its work directory removed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureHostPackages } from '../../cluster/host-packages.ts';
import { createCluster, deleteCluster, type KindCluster } from '../../cluster/kind/cluster.ts';
import { type Engine, engineInstalled, startEngine } from '../../cluster/kind/engine.ts';
import { ensureKindImages } from '../../cluster/kind/images.ts';
import { seconds, stepReporter } from '../../cluster/steps.ts';
import { checkNoRouteOut } from './network.ts';
import { runScenario } from './scenario.ts';

const name = process.env['KIND_CLUSTER'] ?? 'observatory-e2e';
const log = (line: string) => console.log(line);
const steps = stepReporter(log);
const started = performance.now();

if (process.getuid?.() !== 0) {
  console.error('test:kind needs root: it installs and starts a Docker engine.');
  process.exit(2);
}

let engine: Engine | undefined;
let cluster: KindCluster | undefined;
/** Set once kind is about to create the cluster: from then on a failure still deletes it. */
let kind: string | undefined;
let work: string | undefined;
let cleaning: Promise<void> | undefined;
/** Deletes the cluster and stops the engine this run started; once, whoever asks first. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    if (kind)
      await steps.run(`kind delete cluster ${name}`, () => deleteCluster(kind!, name)).catch(() => {});
    if (engine) await steps.run('stopping the Docker engine', () => engine!.stop()).catch(() => {});
    if (work) await rm(work, { recursive: true, force: true });
  })();
  return cleaning;
}
// Ctrl+C or a kill leaves nothing behind either: no node container, no engine, no iptables rule.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`test:kind: ${signal}, cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  await ensureHostPackages(steps, { 'docker.io': 'dockerd' });
  if (!engineInstalled()) throw new Error('dockerd is missing after installing docker.io');
  engine = await steps.run('Docker engine', (progress) => startEngine(progress));
  const images = await ensureKindImages(steps);
  const dir = await mkdtemp(join(tmpdir(), 'observatory-kind-'));
  work = dir;
  kind = images.kind;
  cluster = await steps.run(`kind cluster ${name}`, (progress) =>
    createCluster(
      {
        name,
        kind: images.kind,
        kindnode: images.kindnode,
        nodeImage: images.nodeImage,
        kubeconfig: join(dir, 'kubeconfig'),
        work: dir,
      },
      progress,
    ),
  );
  await steps.run('no route out: node and Pod', (progress) =>
    checkNoRouteOut(cluster!, images.shellImage, progress),
  );
  await runScenario(cluster, images, steps);
  log(`test:kind passed in ${seconds(performance.now() - started)}`);
} catch (error) {
  console.error(`test:kind failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
