/** The preflight Job of a pass from release 3 to release 4; it owns PreflightPassed. */

import { ensureJob } from '../jobs.ts';
import { passOf } from '../pass.ts';
import { isRelease4 } from '../states.ts';
import { type Step, StepOutput } from '../step.ts';

export const preflightStep: Step = {
  name: 'preflight',
  owns: ['PreflightPassed'],
  run(input) {
    const out = new StepOutput();
    const { state, pass } = passOf(input);
    if (!pass || isRelease4(state) || !isRelease4(pass.state)) {
      if (isRelease4(state)) out.set('PreflightPassed', 'Release4Running');
      else out.set('PreflightPassed', 'NotRequired');
      return out.next();
    }
    const to = pass.state;
    if (pass.preflightPassed) {
      out.set('PreflightPassed', 'PreflightSucceeded', { to });
      return out.next();
    }
    const job = ensureJob(input, out, {
      purpose: 'preflight',
      state: to,
      image: pass.image,
      inputs: { pass: pass.since },
      label: 'preflight checks',
      failureReason: 'PreflightFailed',
    });
    switch (job.progress) {
      case 'succeeded':
        out.patch({ target: { ...pass, preflightPassed: true } });
        out.set('PreflightPassed', 'PreflightSucceeded', { to });
        return out.next();
      case 'failed':
        out.set('PreflightPassed', 'PreflightFailed', { to, job: job.name });
        return out.stop();
      case 'waiting':
        out.set('PreflightPassed', 'PreflightRunning', { to, detail: job.detail });
        return out.stop();
    }
  },
};
