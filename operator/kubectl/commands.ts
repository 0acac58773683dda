/**
 * `kubectl observatory` end to end: parse, connect, run one command, and map every failure to one
 * line on stderr and the documented exit code (0 done, 1 failed or refused, 2 usage or kubeconfig).
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { type BackfillReport, WORKER_PATHS } from '../../server/contract/worker-api.ts';
import { enabledSteps } from '../api/effective.ts';
import type { ObservabilityService } from '../api/v1alpha1.ts';
import { observationsNeeded, plan } from '../index.ts';
import { observeWorld } from '../runtime/observe.ts';
import { type Command, parseArgs, UsageError, usage } from './args.ts';
import { backupListView, renderBackupList } from './backup-list.ts';
import { ApiError, ConfigError, loadKubeConfig, namespaceOf, PluginClient } from './client.ts';
import { estimatesOf } from './estimates.ts';
import { planView, renderPlan } from './plan-view.ts';
import { type BundleFile, buildBundle, type PodLog, podsToRead, type WorkerAnswer } from './report.ts';
import {
  type AnnotationRequest,
  approvalRequest,
  backupRequest,
  hibernationRequest,
  noPodReason,
  Refused,
  restoreRequest,
  retryBackfillRequest,
} from './requests.ts';
import { renderStatus, statusView } from './status-view.ts';
import { tarGz } from './tar.ts';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

async function execute(command: Exclude<Command, { kind: 'help' }>, client: PluginClient, io: Io) {
  const o = await client.object(command.name);
  switch (command.kind) {
    case 'status': {
      const view = statusView(o);
      io.out(command.output === 'json' ? json(view) : renderStatus(view));
      return;
    }
    case 'plan': {
      const { caches, unreadable } = await client.caches();
      const reads = client.workerReads();
      // The planner keeps only the backfill's progress; the estimates read the whole report.
      let report: BackfillReport | undefined;
      const world = await observeWorld(o, caches, {
        ...reads,
        backfill: async (pod) => (report = await reads.backfill(pod)),
      });
      const view = planView(
        o,
        world,
        plan({ object: o, world }),
        observationsNeeded(o),
        unreadable,
        estimatesOf(report, enabledSteps(o.spec)),
      );
      io.out(command.output === 'json' ? json(view) : renderPlan(view));
      return;
    }
    case 'backup':
      if (command.action === 'list') {
        io.out(command.output === 'json' ? json(backupListView(o)) : renderBackupList(o));
        return;
      }
      await annotateWith(client, o, backupRequest(o, new Date()), io);
      return;
    case 'approve':
    case 'retry-backfill':
    case 'restore': {
      const r =
        command.kind === 'approve'
          ? approvalRequest(o)
          : command.kind === 'restore'
            ? restoreRequest(o, command.backupId)
            : retryBackfillRequest(o, command.step);
      await annotateWith(client, o, r, io);
      return;
    }
    case 'hibernate':
    case 'wake': {
      const r = hibernationRequest(o, command.kind === 'hibernate');
      await client.patchSpec(o, r.spec);
      io.out(`${r.summary}\n`);
      return;
    }
    case 'report': {
      const createdAt = new Date();
      const files = await reportFiles(o, client, createdAt);
      const stamp = createdAt.toISOString().replace(/[-:]/g, '').replace(/\..*/, 'Z');
      const top = `observatory-report-${o.metadata.name}-${stamp}`;
      const to = command.to ?? `${top}.tar.gz`;
      await writeBundle(files, to, top, createdAt.getTime());
      io.out(
        `wrote the support bundle of ${o.metadata.namespace}/${o.metadata.name} to ${to} (${files.length} files)\n`,
      );
      return;
    }
    case 'logs': {
      const job = o.status?.backfill?.currentJob;
      if (!job)
        throw new Refused(
          `${o.metadata.name} has no current backfill Job (status.backfill.currentJob is unset)`,
        );
      const [pod] = await client.jobPods(job);
      if (!pod?.metadata?.name) throw new Refused(noPodReason(o, job));
      io.err(`Pod ${pod.metadata.name} of Job ${job}\n`);
      io.out(await client.podLog(pod.metadata.name, command.tail));
      return;
    }
  }
}

async function annotateWith(client: PluginClient, o: ObservabilityService, r: AnnotationRequest, io: Io) {
  await client.annotate(o, r.annotation, r.value);
  io.out(`${r.summary}\n`);
}

/**
 * The worker reports a bundle holds, by name: health with its propagation record, producers,
 * backfill, the ingestion log's backlog, the Jobs' recorded results.
 */
const WORKER_REPORTS = {
  health: WORKER_PATHS.health,
  producers: WORKER_PATHS.producers,
  backfill: WORKER_PATHS.backfill,
  'ingestion-backlog': WORKER_PATHS.ingestionBacklog,
  'job-results': WORKER_PATHS.jobResults,
} as const;

async function reportFiles(o: ObservabilityService, client: PluginClient, at: Date): Promise<BundleFile[]> {
  const sources = await client.reportSources();
  const { logs: logPods, workers } = podsToRead(o, sources.objects);
  const logs: PodLog[] = [];
  for (const { pod, containers } of logPods)
    for (const container of containers)
      logs.push({
        pod,
        container,
        text: await client
          .podLog(pod, undefined, container)
          .catch((err: Error) => `(no log: ${err.message})\n`),
      });
  const worker: WorkerAnswer[] = [];
  for (const pod of workers)
    for (const [report, path] of Object.entries(WORKER_REPORTS))
      worker.push({
        pod,
        report,
        body: await client.workerAnswer({ metadata: { name: pod } } as V1Pod, path),
      });
  return buildBundle({ ...sources, object: o, logs, worker, createdAt: at.toISOString() });
}

/** Into a new or empty directory, or a .tar.gz file. */
async function writeBundle(files: BundleFile[], to: string, top: string, mtime: number): Promise<void> {
  if (to.endsWith('.tar.gz') || to.endsWith('.tgz')) {
    await writeFile(to, tarGz(files, top, mtime), { flag: 'wx', mode: 0o600 }).catch(
      (err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? new Refused(`${to} exists: name a new file`) : err;
      },
    );
    return;
  }
  await mkdir(to, { recursive: true, mode: 0o700 });
  if ((await readdir(to)).length > 0) throw new Refused(`${to} is not empty: name a new or empty directory`);
  for (const f of files) {
    const path = join(to, f.path);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, f.content, { mode: 0o600 });
  }
}

export async function run(argv: readonly string[], io: Io): Promise<number> {
  try {
    const { command, connection } = parseArgs(argv);
    if (command.kind === 'help') {
      io.out(usage(command.topic));
      return 0;
    }
    const kc = loadKubeConfig(connection, io.env);
    await execute(command, new PluginClient(kc, namespaceOf(kc, connection)), io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\nRun "kubectl observatory --help" for usage.\n`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(`error: ${err.message}\n`);
      return 2;
    }
    if (err instanceof ApiError || err instanceof Refused) {
      io.err(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
