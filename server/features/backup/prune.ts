/**
 * Retention over the backup bucket: reads every backup's manifest under the prefix, decides with
 * retention.ts, and deletes the expired ones, each manifest first so a backup half removed never
 * looks complete. Folders without a manifest (a backup running, or an unfinished one the next run
 * of its id cleans) are left alone.
 */
import {
  type BackupPruneSummary,
  backupKeys,
  backupManifestSchema,
  PRUNE_SUMMARY_MAX_IDS,
} from '../../contract/backup.ts';
import type { BackupBucket } from './bucket.ts';
import { applyRetention, type RetentionRule, type StoredBackup } from './retention.ts';

const MANIFEST = /^([^/]+)\/manifest\.json$/;

export interface PruneRequest {
  prefix: string;
  rule: RetentionRule;
  protect: ReadonlySet<string>;
  now: Date;
  say: (line: string) => void;
}

export async function pruneBackups(bucket: BackupBucket, r: PruneRequest): Promise<BackupPruneSummary> {
  const objects = await bucket.list(r.prefix);
  const folders = new Set<string>();
  const complete: StoredBackup[] = [];
  for (const o of objects) {
    const rel = o.key.slice(r.prefix.length);
    const folder = rel.split('/')[0];
    if (folder && rel.includes('/')) folders.add(folder);
    const id = MANIFEST.exec(rel)?.[1];
    if (!id) continue;
    const parsed = backupManifestSchema.safeParse(JSON.parse((await bucket.getText(o.key)) ?? 'null'));
    // A manifest that does not parse is not a backup this version can restore; retention leaves it to people.
    if (parsed.success && parsed.data.id === id) complete.push({ id, finishedAt: parsed.data.finishedAt });
    else r.say(`backup-prune: ${o.key} is not a manifest of backup ${id}; left in place`);
  }
  const { kept, expired } = applyRetention(complete, r.rule, r.now, r.protect);
  for (const b of expired) {
    await bucket.removeAll(`${r.prefix}${backupKeys(b.id).manifest}`);
    const removed = await bucket.removeAll(`${r.prefix}${b.id}/`);
    r.say(`backup-prune: deleted backup ${b.id} (finished ${b.finishedAt}, ${removed + 1} objects)`);
  }
  return {
    kept: kept.length,
    ...(kept[0] ? { newest: kept[0].id, oldestKeptAt: kept.at(-1)!.finishedAt } : {}),
    deletedCount: expired.length,
    deleted: expired.slice(0, PRUNE_SUMMARY_MAX_IDS).map((b) => b.id),
    incomplete: [...folders].filter((f) => !complete.some((b) => b.id === f)).length,
  };
}
