/** spec.paused: nothing else runs, and the other conditions keep what they last said. */
import { type Step, StepOutput } from '../step.ts';

export const pauseStep: Step = {
  name: 'pause',
  owns: ['Paused'],
  run(input) {
    const out = new StepOutput();
    if (!input.spec.paused) {
      out.set('Paused', 'NotPaused');
      return out.next();
    }
    out.set('Paused', 'SpecPaused');
    out.waiting.push('spec.paused is true: no changes are made');
    out.phase = 'Paused';
    return out.result({ kind: 'hold' });
  },
};
