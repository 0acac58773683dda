/**
 * The workloads: during a pass, roll both Deployments out as rendered for the target and only
 * then advance status.state (G2); between passes, keep them as the status says (G1).
 */
import type { MigrationState, RecordedSettings } from '../../api/v1alpha1.ts';
import { approvedSettings } from '../../render/settings.ts';
import { canonicalJson } from '../../util/hash.ts';
import { passOf, passPhase } from '../pass.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';
import {
  applyDeployments,
  applyDisruptionBudgets,
  applyNetworkPolicies,
  applyServices,
} from '../workloads.ts';

/** The settings `state` runs with as rendered (absent for Release3, whose settings are fixed). */
function recordFor(input: StepInput, state: MigrationState): RecordedSettings | undefined {
  return state === 'Release3' ? undefined : approvedSettings(state, input.spec, input.render.recorded);
}

export const rolloutStep: Step = {
  name: 'rollout',
  owns: [],
  run(input) {
    const out = new StepOutput();
    const { state: from, pass } = passOf(input);
    applyServices(input, out);
    applyDisruptionBudgets(input, out);
    applyNetworkPolicies(input, out);
    if (!pass) {
      const { state, deployedImage } = input.status;
      if (state === undefined || deployedImage === undefined) return out.next();
      // A change of the observed state's own settings (the spec asks this state) is approved by
      // being asked: recorded with the rendering that applies it.
      const settings = recordFor(input, state);
      if (canonicalJson(settings) !== canonicalJson(input.status.settings)) out.patch({ settings });
      if (!applyDeployments(input, out, state, deployedImage)) out.phase = 'RollingOut';
      return out.next();
    }
    const to = pass.state;
    if (!applyDeployments(input, out, to, pass.image)) return out.stop();
    // The pass is complete: only now does the observed state advance (G2).
    const upgraded = input.status.deployedImage !== undefined && input.status.deployedImage !== pass.image;
    out.patch({
      state: to,
      deployedImage: pass.image,
      ...(upgraded ? { previousImage: input.status.deployedImage, failedUpgrade: undefined } : {}),
      settings: recordFor(input, to),
      ...(to === 'Dual' && from !== 'Dual' ? { dualSince: input.now } : {}),
      ...(to === 'Release3' || to === 'Legacy' ? { dualSince: undefined } : {}),
      // Version 3 leaves the version 4 backfill dormant; a later upgrade re-reads its progress.
      ...(to === 'Release3' && from !== 'Release3' ? { backfill: undefined } : {}),
    });
    out.phase = passPhase(input.status, pass);
    out.planned.push(`state ${from} -> ${to} recorded`);
    out.requeue(0);
    return out.stop();
  },
};
