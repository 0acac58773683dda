/** The reconciler's copy of the admission rules (G8): an invalid spec stalls with the field paths. */
import { validate } from '../../validation.ts';
import { STALL_REASONS } from '../conditions.ts';
import { type Step, StepOutput } from '../step.ts';

export const validateStep: Step = {
  name: 'validate',
  owns: [],
  run(input) {
    const out = new StepOutput();
    const violations = validate({ meta: input.object.metadata, spec: input.object.spec, status: input.old });
    if (violations.length === 0) return out.next();
    const first = violations[0]!;
    out.phase = 'InvalidSpec';
    out.stalled(
      STALL_REASONS.includes(first.reason) ? first.reason : 'InvalidSpec',
      violations.map((v) => `${v.field}: ${v.message}`).join('; '),
    );
    for (const v of violations.slice(1)) out.waiting.push(`${v.field}: ${v.message}`);
    return out.stop();
  },
};
