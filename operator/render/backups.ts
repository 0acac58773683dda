/**
 * The owned record of one backup: a ConfigMap `<name>-backup-<id>` labelled with the id, so the
 * backups outlive the bounded status.backups list and `kubectl get cm -l` finds them. Deleting
 * the ObservabilityService deletes the records (ownerReference), never the bucket's objects.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { BackupRecord, ObjectMeta } from '../api/v1alpha1.ts';
import { labels, ownerReference } from './names.ts';

export const BACKUP_ID_LABEL = 'observatory.dev/backup-id';

export function renderBackupRecord(meta: ObjectMeta, record: BackupRecord): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${meta.name}-backup-${record.id}`,
      namespace: meta.namespace,
      labels: { ...labels(meta.name, 'backup'), [BACKUP_ID_LABEL]: record.id },
      ownerReferences: [ownerReference(meta)],
    },
    data: { 'backup.json': `${JSON.stringify(record, null, 2)}\n` },
  };
}
