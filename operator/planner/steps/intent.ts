/**
 * Records the intent of a new pass before anything acts on it (G5): the reconcile that records
 * it does nothing else. The cutover to EventsOnly is left to the gates step, which records it
 * only when every gate holds. An image whose upgrade was rolled back is not tried again while
 * spec.image still names it: the user changes it (to a fixed image, or back).
 */

import { settingsFromSpec } from '../../render/settings.ts';
import { heldForWindow } from '../maintenance.ts';
import { isImageUpgrade, passOf, passPhase, phaseOfPass } from '../pass.ts';
import { isRelease4 } from '../states.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';

/** A running backfill Job writes the tables a rollback drops and an upgrade's migrations alter. */
function backfillRunning(input: StepInput) {
  return input.world.jobs.find((j) => j.purpose.startsWith('backfill-') && j.outcome === 'running');
}

export const intentStep: Step = {
  name: 'intent',
  owns: [],
  run(input) {
    const out = new StepOutput();
    const failed = input.status.failedUpgrade;
    if (failed && failed.image !== input.spec.image) out.patch({ failedUpgrade: undefined });
    const { state, want, pass, needsPass } = passOf(input);
    if (pass) {
      out.phase = passPhase(input.status, pass);
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
    const target = { state: want, since: input.now, image: input.spec.image };
    const upgrade = isImageUpgrade(input.status, target);
    if (upgrade && failed?.image === input.spec.image) {
      out.stalled(
        'UpgradeFailed',
        `the upgrade to ${failed.image} was rolled back at ${failed.at}: ${failed.reason}; the schema is back at version ${failed.schemaVersion} and web and worker run ${input.status.deployedImage}. Set spec.image to a fixed image (or back to ${input.status.deployedImage})`,
      );
      return out.stop();
    }
    const running = backfillRunning(input);
    if (running && (upgrade || (want === 'Release3' && isRelease4(state)))) {
      const what = upgrade ? `the upgrade to ${input.spec.image}` : 'the rollback';
      out.wait(
        15,
        `${what} waits for the backfill Job ${running.name} to stop (it writes the tables the ${upgrade ? "new image's migrations alter" : 'rollback drops'})`,
      );
      return out.stop();
    }
    // Every pass that moves a running deployment waits for a maintenance window, whether it changes
    // the mode or the image (whose migrations are as disruptive); a first deployment and a rollback
    // to release 3 (the way out of trouble) do not.
    const what = upgrade
      ? `the upgrade ${input.status.deployedImage} -> ${input.spec.image}`
      : `the move ${state} -> ${want}`;
    const held = input.status.state !== undefined && want !== 'Release3';
    if (held && heldForWindow(input, out, what)) return out.stop();
    out.patch({
      target: {
        ...target,
        ...(want === 'Release3' ? {} : { settings: settingsFromSpec(want, input.spec) }),
        ...(upgrade ? { fromImage: input.status.deployedImage } : {}),
      },
    });
    out.phase = upgrade ? 'Upgrading' : phaseOfPass(state, want);
    out.planned.push(
      upgrade
        ? `record the intent to upgrade ${input.status.deployedImage} -> ${input.spec.image} in ${state}`
        : `record the intent to move ${state} -> ${want} (${input.spec.image})`,
    );
    out.requeue(0);
    return out.stop();
  },
};
