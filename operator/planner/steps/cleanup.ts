/** The optional truncate of the legacy tables after the cutover, once the backfill no longer reads them. */
import { backfillEnabled, enabledSteps } from '../../api/effective.ts';
import { jobNameFor } from '../../render/jobs.ts';
import { attemptOf, ensureJob, findJob } from '../jobs.ts';
import { heldForWindow } from '../maintenance.ts';
import { type Step, StepOutput } from '../step.ts';

export const cleanupStep: Step = {
  name: 'cleanup',
  owns: [],
  run(input) {
    const out = new StepOutput();
    const s = input.status;
    if (!input.spec.cleanup?.truncateLegacyTables || s.legacyTablesTruncated || s.state !== 'EventsOnly')
      return out.next();
    out.phase = 'CleaningUp';
    const total = enabledSteps(input.spec).length;
    if (backfillEnabled(input.spec) && (s.backfill?.completedSteps ?? 0) < total) {
      out.wait(60, 'the cleanup waits for the backfill, which reads the legacy tables');
      return out.next();
    }
    const name = jobNameFor(input.render, { purpose: 'cleanup', attempt: attemptOf(s, 'cleanup') });
    if (!findJob(input, 'cleanup', name) && heldForWindow(input, out, 'the truncate of the legacy tables'))
      return out.next();
    const job = ensureJob(input, out, {
      purpose: 'cleanup',
      state: 'EventsOnly',
      image: s.deployedImage ?? input.spec.image,
      label: 'truncate the legacy tables',
      failureReason: 'CleanupFailed',
    });
    if (job.progress === 'succeeded') out.patch({ legacyTablesTruncated: true });
    return out.next();
  },
};
