/**
 * The preflight Job of a pass from release 3 to release 4, and of an image upgrade within release
 * 4: there the new image's Job also reports the schema versions it knows and the oldest it migrates
 * from (server/contract/upgrade.ts), and a skip its migrations cannot bridge is refused before any
 * other Job runs. It owns PreflightPassed.
 */

import { preflightSummarySchema, upgradeRefusal } from '../../../server/contract/upgrade.ts';
import { ensureJob } from '../jobs.ts';
import { isImageUpgrade, passOf, type Target } from '../pass.ts';
import { isRelease4 } from '../states.ts';
import { type Step, StepOutput } from '../step.ts';
import { readSummary } from '../termination.ts';

/** Refuses the upgrade (Stalled) when its recorded schema report says so; true when refused. */
function refused(out: StepOutput, pass: Target, schema: NonNullable<Target['schema']>): boolean {
  const why = upgradeRefusal(schema);
  if (!why) return false;
  const detail = `the upgrade to ${pass.image} is refused: ${why}`;
  out.set('PreflightPassed', 'UpgradeRefused', { detail });
  out.stalled(
    'UpgradeRefused',
    `${detail}. Set spec.image to an image that migrates from version ${schema.database}`,
  );
  return true;
}

export const preflightStep: Step = {
  name: 'preflight',
  owns: ['PreflightPassed'],
  run(input) {
    const out = new StepOutput();
    const { state, pass } = passOf(input);
    const upgrade = pass !== undefined && isImageUpgrade(input.status, pass);
    if (!pass || (!upgrade && (isRelease4(state) || !isRelease4(pass.state)))) {
      if (isRelease4(state)) out.set('PreflightPassed', 'Release4Running');
      else out.set('PreflightPassed', 'NotRequired');
      return out.next();
    }
    const to = upgrade ? pass.image : pass.state;
    if (pass.schema && refused(out, pass, pass.schema)) return out.stop();
    if (pass.preflightPassed) {
      out.set('PreflightPassed', 'PreflightSucceeded', { to });
      return out.next();
    }
    const job = ensureJob(input, out, {
      purpose: 'preflight',
      state: pass.state,
      image: pass.image,
      inputs: { pass: pass.since },
      label: 'preflight checks',
      failureReason: 'PreflightFailed',
    });
    switch (job.progress) {
      case 'succeeded': {
        if (!upgrade) {
          out.patch({ target: { ...pass, preflightPassed: true } });
          out.set('PreflightPassed', 'PreflightSucceeded', { to });
          return out.next();
        }
        const read = readSummary(preflightSummarySchema, job.terminationMessage);
        if (!read.ok) {
          const detail = `the preflight Job ${job.name} of ${pass.image} reported no schema versions (${read.why}; server/contract/upgrade.ts), so the upgrade cannot be checked`;
          out.set('PreflightPassed', 'UpgradeRefused', { detail });
          out.stalled('UpgradeRefused', `${detail}. Set spec.image to an image whose preflight reports them`);
          return out.stop();
        }
        const { schema } = read.summary;
        // Recorded either way: the Job (and its termination message) may go before the next look.
        if (upgradeRefusal(schema)) {
          out.patch({ target: { ...pass, schema } });
          refused(out, pass, schema);
          return out.stop();
        }
        out.patch({ target: { ...pass, schema, preflightPassed: true } });
        out.set('PreflightPassed', 'PreflightSucceeded', { to });
        return out.next();
      }
      case 'failed':
        out.set('PreflightPassed', 'PreflightFailed', { to, job: job.name });
        return out.stop();
      case 'waiting':
        out.set('PreflightPassed', 'PreflightRunning', { to, detail: job.detail });
        return out.stop();
    }
  },
};
