/**
 * Backup retention (spec.backup.retention), pure: which complete backups a prune deletes. A backup
 * is kept when any rule keeps it: it is among the newest `keepLast`, younger than `maxAgeMs`, named
 * by the operator as still needed (a restore, a pass, a running Job), or the newest of all (a
 * deployment is never left without a backup by retention). Both rules set keep the union, so a
 * prune never deletes more than either rule alone would.
 */

export interface StoredBackup {
  id: string;
  finishedAt: string;
}

export interface RetentionRule {
  keepLast?: number;
  maxAgeMs?: number;
}

export interface RetentionDecision {
  /** Newest first. */
  kept: StoredBackup[];
  expired: StoredBackup[];
}

export function applyRetention(
  backups: readonly StoredBackup[],
  rule: RetentionRule,
  now: Date,
  protect: ReadonlySet<string>,
): RetentionDecision {
  const newestFirst = [...backups].sort(
    (a, b) => Date.parse(b.finishedAt) - Date.parse(a.finishedAt) || b.id.localeCompare(a.id),
  );
  const kept: StoredBackup[] = [];
  const expired: StoredBackup[] = [];
  newestFirst.forEach((b, i) => {
    const keep =
      i === 0 ||
      protect.has(b.id) ||
      (rule.keepLast !== undefined && i < rule.keepLast) ||
      (rule.maxAgeMs !== undefined && now.getTime() - Date.parse(b.finishedAt) < rule.maxAgeMs) ||
      (rule.keepLast === undefined && rule.maxAgeMs === undefined);
    (keep ? kept : expired).push(b);
  });
  return { kept, expired };
}
