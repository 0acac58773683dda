/**
 * Records the intent of a new pass before anything acts on it (G5): the reconcile that records
 * it does nothing else. The cutover to EventsOnly is left to the gates step, which records it
 * only when every gate holds.
 */

import { settingsFromSpec } from '../../render/settings.ts';
import { heldForWindow } from '../maintenance.ts';
import { passOf, phaseOfPass } from '../pass.ts';
import { isRelease4 } from '../states.ts';
import { type Step, StepOutput } from '../step.ts';

export const intentStep: Step = {
  name: 'intent',
  owns: [],
  run(input) {
    const out = new StepOutput();
    const { state, want, pass, needsPass } = passOf(input);
    if (pass) {
      out.phase = phaseOfPass(state, pass.state);
      if (pass.state !== want) out.waiting.push(`the pass to ${pass.state} must finish first`);
      return out.next();
    }
    if (!needsPass) return out.next();
    if (state === 'Dual' && want === 'EventsOnly') {
      out.phase = 'AwaitingCutover';
      return out.next();
    }
    out.phase = 'Blocked';
    if (
      isRelease4(want) &&
      !isRelease4(state) &&
      !input.spec.upgrade?.backupConfirmed &&
      !input.spec.backup
    ) {
      out.stalled(
        'BackupNotConfirmed',
        'spec.upgrade.backupConfirmed: back up the relational and analytics databases, then set it to true to move release "3" to "4" (or set spec.backup and the operator takes the backup)',
      );
      return out.stop();
    }
    if (want === 'Release3' && isRelease4(state)) {
      const running = input.world.jobs.find(
        (j) => j.purpose.startsWith('backfill-') && j.outcome === 'running',
      );
      if (running) {
        out.wait(
          15,
          `the rollback waits for the backfill Job ${running.name} to stop (it writes the tables the rollback drops)`,
        );
        return out.stop();
      }
    }
    // A move to another mode waits for a maintenance window; a first deployment, an image update and
    // a rollback (the way out of trouble) do not.
    const moves = input.status.state !== undefined && want !== state && want !== 'Release3';
    if (moves && heldForWindow(input, out, `the move ${state} -> ${want}`)) return out.stop();
    out.patch({
      target: {
        state: want,
        since: input.now,
        image: input.spec.image,
        ...(want === 'Release3' ? {} : { settings: settingsFromSpec(want, input.spec) }),
      },
    });
    out.phase = phaseOfPass(state, want);
    out.planned.push(`record the intent to move ${state} -> ${want} (${input.spec.image})`);
    out.requeue(0);
    return out.stop();
  },
};
