/**
 * `kubectl observatory` end to end: parse, connect, run one command, and map every failure to one
 * line on stderr and the documented exit code (0 done, 1 failed or refused, 2 usage or kubeconfig).
 */
import { observationsNeeded, plan } from '../index.ts';
import { observeWorld } from '../runtime/observe.ts';
import { type Command, parseArgs, UsageError, usage } from './args.ts';
import { ApiError, ConfigError, loadKubeConfig, namespaceOf, PluginClient } from './client.ts';
import { planView, renderPlan } from './plan-view.ts';
import {
  approvalRequest,
  backupRequest,
  noPodReason,
  Refused,
  restoreRequest,
  retryBackfillRequest,
} from './requests.ts';
import { renderStatus, statusView } from './status-view.ts';

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
      const world = await observeWorld(o, caches, client.workerReads());
      const view = planView(o, world, plan({ object: o, world }), observationsNeeded(o), unreadable);
      io.out(command.output === 'json' ? json(view) : renderPlan(view));
      return;
    }
    case 'approve':
    case 'retry-backfill':
    case 'backup':
    case 'restore': {
      const r =
        command.kind === 'approve'
          ? approvalRequest(o)
          : command.kind === 'backup'
            ? backupRequest(o, new Date())
            : command.kind === 'restore'
              ? restoreRequest(o, command.backupId)
              : retryBackfillRequest(o, command.step);
      await client.annotate(o, r.annotation, r.value);
      io.out(`${r.summary}\n`);
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
