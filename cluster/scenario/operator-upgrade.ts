/**
 * A new operator version rolled out with `helm upgrade` in the middle of a migration, and a watch
 * over the backfill's checkpoints that tells whether any step went backwards meanwhile (a chunk
 * count that drops, a finished step that is unfinished again): the proof that the migration went
 * on from where it was.
 */
import type { V1Pod } from '@kubernetes/client-node';
import pg from 'pg';
import { helm } from '../helm.ts';
import { ensureNextImage, NEXT_TAG, nextImageName } from '../images/next-image.ts';
import type { LocalClusterClient } from '../local-cluster.ts';
import { chartDir } from '../paths.ts';
import { stepReporter } from '../steps.ts';
import { type LocalDeployment, OPERATOR_NAMESPACE, OPERATOR_RELEASE } from './local-deployment.ts';

/** Builds observatory:next when observatory:dev changed and imports it into the node's containerd. */
export async function importNextImage(
  cluster: LocalClusterClient,
  log: (line: string) => void,
): Promise<string> {
  const archive = await ensureNextImage(stepReporter(log));
  await cluster.ctr(['images', 'import', archive]);
  return nextImageName;
}

/** `helm upgrade` of the release to the image tag `next`, keeping every other value; waits for the rollout. */
export async function upgradeOperator(d: LocalDeployment): Promise<void> {
  const r = await helm([
    'upgrade',
    OPERATOR_RELEASE,
    chartDir,
    '--kubeconfig',
    d.cluster.kubeconfigPath,
    '--namespace',
    OPERATOR_NAMESPACE,
    '--reuse-values',
    '--set',
    `image.tag=${NEXT_TAG}`,
    '--wait',
    '--timeout',
    '3m',
  ]);
  if (r.code !== 0) throw new Error(`helm upgrade failed: ${r.stderr}\n${await d.operatorOutput()}`);
}

/** The images the operator's live Pods run. */
export async function operatorImages(d: LocalDeployment): Promise<string[]> {
  return (await d.operatorPods()).map((p: V1Pod) => p.spec?.containers[0]?.image ?? '');
}

export interface StepCheckpoint {
  name: string;
  done: number;
  total: number;
  finished: boolean;
}

export async function readCheckpoints(db: pg.Client): Promise<StepCheckpoint[]> {
  const r = await db.query<{
    name: string;
    state: { chunks?: { done: boolean }[] };
    finished_at: Date | null;
  }>(
    "SELECT name, state, finished_at FROM background_migrations WHERE name LIKE '%\\_v4\\_step\\_%' ORDER BY name",
  );
  return r.rows.map((row) => {
    const chunks = row.state.chunks ?? [];
    return {
      name: row.name,
      done: chunks.filter((c) => c.done).length,
      total: chunks.length,
      finished: row.finished_at !== null,
    };
  });
}

/** What went backwards between two readings of the checkpoints. Pure. */
export function regressions(before: StepCheckpoint[], after: StepCheckpoint[]): string[] {
  const out: string[] = [];
  for (const b of before) {
    const a = after.find((x) => x.name === b.name);
    if (!a) out.push(`${b.name} disappeared`);
    else if (b.finished && !a.finished) out.push(`${b.name} finished, then unfinished again`);
    else if (a.done < b.done) out.push(`${b.name} went from ${b.done} to ${a.done} chunks done`);
  }
  return out;
}

/**
 * Reads the checkpoints every `intervalMs` until stopped; stop() returns every regression seen,
 * how many readings were taken and the last reading.
 */
export async function watchCheckpoints(databaseUrl: string, intervalMs = 200) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  let last = await readCheckpoints(db);
  const seen: string[] = [];
  let readings = 1;
  let running = true;
  const loop = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, intervalMs));
      const now = await readCheckpoints(db);
      readings++;
      seen.push(...regressions(last, now));
      last = now;
    }
  })();
  return {
    latest: () => last,
    async stop(): Promise<{ regressions: string[]; readings: number; latest: StepCheckpoint[] }> {
      running = false;
      try {
        await loop;
      } finally {
        await db.end();
      }
      return { regressions: seen, readings, latest: last };
    },
  };
}
