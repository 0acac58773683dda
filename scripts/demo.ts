/**
 * `npm start`: the whole mission on this machine. Starts (or reuses the cached build of) the local
 * Kubernetes cluster and the datastores, installs the operator with the Helm chart, creates a
 * release 3 ObservabilityService with traffic from the real SDKs, and walks it to EventsOnly
 * (approving the cutover itself) while printing the state, conditions and backfill progress; ends
 * with what moved and how long each step took. `--keep` leaves everything running until Ctrl+C.
 */
import { parseArgs } from 'node:util';
import { helm as helmTool, toolStep } from '../cluster/go-tools.ts';
import { type LocalCluster, startLocalCluster } from '../cluster/local-cluster.ts';
import { LocalDeployment, localPlatform } from '../cluster/scenario/local-deployment.ts';
import {
  countData,
  createRelease3,
  type Obsvc,
  type Step,
  sendTraffic,
  timed,
  walkToEventsOnly,
} from '../cluster/scenario/scenario.ts';
import { stepReporter } from '../cluster/steps.ts';

const NAME = 'demo';
const { values } = parseArgs({
  options: {
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(
    'usage: npm start [-- --keep]\n  --keep  keep the cluster, datastores and operator up until Ctrl+C',
  );
  process.exit(0);
}

/**
 * Settings of a small demo deployment, so the walk takes minutes rather than the defaults' hours:
 * the worker propagates dual-written rows every 5 s after 5 s (defaults 60 s and 30 s), and the
 * cutover needs the old SDK quiet for 20 s (default 24h; the scenario's tests use 1 min).
 */
const DEMO_SETTINGS = {
  propagation: { intervalSeconds: 5, graceSeconds: 5 },
  cutover: { approval: 'Manual', producerQuietPeriod: '20s' },
};

const started = performance.now();
const clock = () => `[${((performance.now() - started) / 1000).toFixed(0).padStart(4)}s]`;
let lastSaid = performance.now();
let doing = 'starting';
const say = (line: string) => {
  lastSaid = performance.now();
  console.log(`${clock()} ${line}`);
};
/** Starts a stage: printed, and named by the heartbeat while it runs. */
const begin = (line: string) => {
  doing = line.replace(/\.\.\.$/, '');
  say(line);
};
// Never silent for long: a waiting stage says what it waits for every 10 s.
setInterval(() => {
  if (performance.now() - lastSaid >= 10_000) say(`  still: ${doing}`);
}, 1_000).unref();

function bar(done: number, total: number, width = 24): string {
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
}

/** Prints what changed in the status since the last poll: state, conditions, backfill steps. */
function progressPrinter(d: LocalDeployment) {
  let state = '';
  let backfill = '';
  const conditions = new Map<string, string>();
  const show = (o: Obsvc) => {
    const s = o.status;
    if (!s) return;
    if (s.state && s.state !== state) {
      state = s.state;
      say(`state: ${state}`);
    }
    for (const c of s.conditions ?? []) {
      const text = `${c.status} ${c.reason}${c.message ? `: ${c.message}` : ''}`;
      const seen = conditions.get(c.type);
      // Conditions that do not apply yet (Unknown from the start) would only be noise.
      if (seen === undefined && c.status === 'Unknown') continue;
      if (seen !== text) {
        conditions.set(c.type, text);
        say(`  ${c.type}=${text}`);
      }
    }
    const progress = /(\d+)\/(\d+)/.exec(s.backfill?.progress ?? '');
    if (progress) {
      const line = `backfill ${bar(Number(progress[1]), Number(progress[2]))}${s.backfill?.currentJob ? ` ${s.backfill.currentJob}` : ''}`;
      if (line !== backfill) {
        backfill = line;
        say(line);
      }
    }
  };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await d
        .get(NAME)
        .then(show)
        .catch(() => {});
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

let cluster: LocalCluster | undefined;
let d: LocalDeployment | undefined;
let stopping = false;
async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  begin('stopping the deployment, the datastores and the cluster...');
  await d?.stop().catch((error: Error) => say(error.message));
  await cluster?.stop().catch((error: Error) => say(error.message));
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(130));
process.on('SIGTERM', () => void shutdown(143));

try {
  const steps: Step[] = [];
  begin('starting the local Kubernetes cluster (the first run builds each part, shown as a step)...');
  cluster = await timed(steps, 'local cluster', () => startLocalCluster({ log: say }));
  begin(
    'starting PostgreSQL, Redis and the analytics server on the node IP, as Services in namespace obs...',
  );
  const running = cluster;
  d = await timed(steps, 'datastores', () => LocalDeployment.start(running, 'obs'));
  await timed(steps, 'helm', () => toolStep(helmTool, stepReporter(say)));
  begin('helm install of charts/observatory (the operator as a Pod, image observatory:dev)...');
  await timed(steps, 'helm install', () => d!.installChart());
  const p = { ...localPlatform(d), specExtras: DEMO_SETTINGS };
  say(`demo settings: ${JSON.stringify(DEMO_SETTINGS)}`);
  const stopPrinting = progressPrinter(d);

  begin(`creating ObservabilityService ${NAME} at release 3...`);
  const { project } = await timed(steps, 'release 3 up', () => createRelease3(p, NAME));
  begin('sending traffic: langfuse 3.x SDK (traces, spans, generations) and an OTel exporter...');
  await sendTraffic(p, project, 'v3');
  begin(
    'walking to EventsOnly: Legacy, Dual (with more traffic), backfill, cutover (approved by this script)...',
  );
  await walkToEventsOnly(
    p,
    NAME,
    project,
    {
      beforeApproval: async (o) => say(`approving the cutover of generation ${o.metadata.generation}`),
      onStep: (step) => begin(`-- ${step}`),
      onPropagation: (c) =>
        say(
          `  in events_full: ${c.traces - c.missingTraces}/${c.traces} legacy traces, ${c.observations - c.missingObservations}/${c.observations} observations`,
        ),
    },
    steps,
  );
  await stopPrinting();

  const c = await countData(p, project.projectId);
  say('done. What moved:');
  console.log(`  legacy traces        ${c.traces}  (missing from events_full: ${c.missingTraces})`);
  console.log(
    `  legacy observations  ${c.observations}  (missing from events_full: ${c.missingObservations})`,
  );
  console.log(
    `  events_full spans    ${c.eventsFull}  (a root span t-<traceId> per trace, plus the observations)`,
  );
  console.log('How long each step took:');
  for (const s of steps) console.log(`  ${(s.ms / 1000).toFixed(1).padStart(7)}s  ${s.name}`);
  console.log(`  ${((performance.now() - started) / 1000).toFixed(1).padStart(7)}s  total`);

  if (values.keep) {
    console.log(`\nEverything stays up until Ctrl+C.\n  export KUBECONFIG=${cluster.kubeconfigPath}`);
    console.log(`  ${cluster.kubectlPath} get pods,svc -n ${d.ns}`);
    console.log(`  ${cluster.kubectlPath} get obsvc -n ${d.ns} -w`);
    console.log(
      `  web: ${await p.webUrl()}  (public key ${project.publicKey}, secret key ${project.secretKey})`,
    );
    await new Promise(() => {});
  }
  await shutdown(0);
} catch (err) {
  console.error(`${clock()} failed: ${(err as Error).stack ?? err}`);
  if (d) console.error(`operator output:\n${await d.operatorOutput().catch(() => '')}`);
  await shutdown(1);
}
