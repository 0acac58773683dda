/**
 * The backup before a pass's irreversible step (the schema move from release 3 to 4, an image
 * upgrade's migrations within release 4, and the cutover to EventsOnly), when spec.backup is set: the schema step starts only once the backup is
 * complete and verified. spec.upgrade.backupConfirmed skips the one before the release move (the
 * admin took it). It owns BackupComplete, written only when spec.backup is set.
 */
import { ensureBackup, latestComplete, passBackupId } from '../backups.ts';
import { isImageUpgrade, passOf } from '../pass.ts';
import { isRelease4 } from '../states.ts';
import { type Step, StepOutput } from '../step.ts';

const STEP_NAME = {
  Release4: 'the move to release 4',
  Cutover: 'the cutover to EventsOnly',
  Upgrade: 'the image upgrade',
} as const;

export const backupStep: Step = {
  name: 'backup',
  owns: ['BackupComplete'],
  run(input) {
    const out = new StepOutput();
    if (!input.spec.backup) return out.next();
    const { state, pass } = passOf(input);
    // A first deployment has no data to back up.
    const deployed = input.status.state !== undefined;
    const trigger =
      pass && deployed && !isRelease4(state) && isRelease4(pass.state)
        ? 'Release4'
        : pass && state === 'Dual' && pass.state === 'EventsOnly'
          ? 'Cutover'
          : pass && isImageUpgrade(input.status, pass)
            ? 'Upgrade'
            : undefined;
    const idle = () => {
      const last = latestComplete(input.status);
      if (last)
        out.set('BackupComplete', 'BackupTaken', {
          id: last.id,
          trigger: last.trigger,
          objects: last.objects ?? 0,
          bytes: last.bytes ?? 0,
        });
      else out.set('BackupComplete', 'NoBackupYet');
      return out.next();
    };
    if (!pass || !trigger || pass.schemaStarted || pass.backupId) return idle();
    const step = STEP_NAME[trigger];
    if (trigger === 'Release4' && input.spec.upgrade?.backupConfirmed) {
      out.set('BackupComplete', 'BackupSkipped', { step });
      return out.next();
    }
    const id = passBackupId(input.object.metadata.uid, trigger, pass.since);
    const progress = ensureBackup(input, out, {
      id,
      trigger,
      state,
      // The image the pass rolls out: it has the backup command even when the running one predates it.
      image: pass.image,
    });
    switch (progress.kind) {
      case 'complete':
        out.patch({ target: { ...pass, backupId: id } });
        out.set('BackupComplete', 'BackupTaken', {
          id,
          trigger,
          objects: progress.record.objects ?? 0,
          bytes: progress.record.bytes ?? 0,
        });
        return out.next();
      case 'waiting':
        out.phase = 'BackingUp';
        out.set('BackupComplete', 'BackupRunning', { id, step, detail: progress.detail });
        return out.stop();
      case 'failed':
        out.set('BackupComplete', 'BackupFailed', { id, step, detail: progress.detail });
        out.stalled('BackupFailed', `backup ${id} before ${step}: ${progress.detail}`);
        return out.stop();
    }
  },
};
