/**
 * A backup on request (annotation observatory.dev/backup-requested, set by `kubectl observatory
 * backup`): taken beside whatever else runs, never holding the fold. The value is consumed once
 * the backup is recorded, so a record that left the bounded status.backups list is not taken again.
 */
import { ANNOTATIONS } from '../../api/v1alpha1.ts';
import { ensureBackup, requestedBackupId } from '../backups.ts';
import { type Step, StepOutput } from '../step.ts';

export const requestedBackupStep: Step = {
  name: 'requested backup',
  owns: [],
  run(input) {
    const out = new StepOutput();
    const annotation = ANNOTATIONS.backupRequested;
    const value = input.object.metadata.annotations?.[annotation];
    if (!value || input.status.consumedRetries?.[annotation] === value) return out.next();
    if (!input.spec.backup) {
      out.waiting.push(`${annotation}: spec.backup must name a destination before a backup can be taken`);
      return out.next();
    }
    const id = requestedBackupId(input.object.metadata.uid, value);
    const progress = ensureBackup(input, out, {
      id,
      trigger: 'Requested',
      state: input.status.state ?? 'Release3',
      image: input.status.deployedImage ?? input.spec.image,
    });
    // A failed one stays in status.backups with its message; another request takes a new one.
    if (progress.kind !== 'waiting')
      out.patch({ consumedRetries: { ...input.status.consumedRetries, [annotation]: value } });
    return out.next();
  },
};
