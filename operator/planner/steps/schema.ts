/**
 * The schema Job of a pass (migrate up, or the rollback to release 3's version); it owns
 * SchemaMigrated. When the migration of an image upgrade within release 4 fails, the pass turns
 * into its own rollback instead of stalling: the failure is recorded first (G5), the new image's
 * `migrate down` (its migrations carry the down steps the previous image does not know) rewinds the
 * schema to the version the preflight found, and the pass ends on the previous image, which web
 * and worker never left (they roll out only after a successful migration).
 */
import { RELEASE_3_SCHEMA_VERSION } from '../../../server/contract/schema-versions.ts';

import { ensureJob } from '../jobs.ts';
import { isImageUpgrade, passOf, type Target } from '../pass.ts';
import { isRelease4 } from '../states.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';

type Schema = NonNullable<Target['schema']>;

/** The image web and worker ran when the upgrade was recorded. */
const previousOf = (input: StepInput, pass: Target) =>
  pass.fromImage ?? input.status.deployedImage ?? pass.image;

/** The rollback of a failed image upgrade; ends the pass on the previous image once it succeeded. */
function rollBackUpgrade(input: StepInput, out: StepOutput, pass: Target, why: string, schema: Schema) {
  const previous = previousOf(input, pass);
  const version = schema.database;
  const job = ensureJob(input, out, {
    purpose: 'rollback',
    state: pass.state,
    image: pass.image,
    schemaVersion: version,
    inputs: { pass: pass.since, to: String(version) },
    label: `rollback of the analytics schema to version ${version}`,
    failureReason: 'RollbackFailed',
  });
  if (job.progress !== 'succeeded') {
    out.set('SchemaMigrated', 'UpgradeRollingBack', {
      image: pass.image,
      why,
      version,
      previous,
      detail: job.detail,
    });
    return out.stop();
  }
  // The pass is over: its target names the image that runs, so no pass is in progress.
  const {
    rollingBack: _r,
    schemaStarted: _s,
    preflightPassed: _p,
    fromImage: _f,
    schema: _v,
    ...rest
  } = pass;
  out.patch({
    target: { ...rest, image: previous },
    failedUpgrade: { image: pass.image, reason: why, schemaVersion: version, at: input.now },
  });
  out.set('SchemaMigrated', 'SchemaUpToDate', { state: pass.state });
  out.planned.push(`upgrade to ${pass.image} rolled back: schema at version ${version}, ${previous} kept`);
  out.requeue(0);
  return out.stop();
}

export const schemaStep: Step = {
  name: 'schema',
  owns: ['SchemaMigrated'],
  run(input) {
    const out = new StepOutput();
    const { state, pass } = passOf(input);
    if (!pass) {
      if (input.status.state === undefined) out.set('SchemaMigrated', 'NoSchemaYet');
      else out.set('SchemaMigrated', 'SchemaUpToDate', { state: input.status.state });
      return out.next();
    }
    const to = pass.state;
    if (pass.schemaMigrated) {
      out.set('SchemaMigrated', 'SchemaUpToDate', { state: to });
      return out.next();
    }
    // The preflight of an upgrade recorded the version to return to before any migration ran.
    if (pass.rollingBack && pass.schema)
      return rollBackUpgrade(input, out, pass, pass.rollingBack, pass.schema);
    const upgrade = isImageUpgrade(input.status, pass) && pass.schema !== undefined;
    const rollback = to === 'Release3' && isRelease4(state);
    // From here the schema changes: the pass must finish before any other may start.
    const started = { ...pass, schemaStarted: true };
    out.patch({ target: started });
    const common = { inputs: { pass: pass.since }, label: '', failureReason: '' };
    const job = rollback
      ? ensureJob(input, out, {
          ...common,
          purpose: 'rollback',
          state,
          // The migration files of the deployed version 4 image rewind the schema.
          image: input.status.deployedImage ?? pass.image,
          label: `rollback of the analytics schema to version ${RELEASE_3_SCHEMA_VERSION}`,
          failureReason: 'RollbackFailed',
        })
      : ensureJob(input, out, {
          ...common,
          purpose: 'migrate',
          state: to,
          image: pass.image,
          label: 'schema migrations',
          failureReason: 'MigrationFailed',
          // A failed upgrade rolls back on its own; the user's retry is a new spec.image.
          ...(upgrade ? { failureStalls: false } : {}),
        });
    const action = rollback
      ? `rewinding the analytics schema to version ${RELEASE_3_SCHEMA_VERSION}`
      : 'applying the schema migrations';
    switch (job.progress) {
      case 'succeeded':
        out.patch({ target: { ...started, schemaMigrated: true } });
        out.set('SchemaMigrated', 'SchemaUpToDate', { state: to });
        return out.next();
      case 'failed':
        if (upgrade && pass.schema) {
          // Recorded before the rollback Job is created (G5).
          const why = (job.why ?? 'no reason given').slice(0, 1024);
          out.patch({ target: { ...started, rollingBack: why } });
          out.set('SchemaMigrated', 'UpgradeRollingBack', {
            image: pass.image,
            why,
            version: pass.schema.database,
            previous: previousOf(input, pass),
            detail: 'recorded',
          });
          out.planned.push(`roll back the upgrade to ${pass.image}: ${job.detail}`);
          out.requeue(0);
          return out.stop();
        }
        out.set('SchemaMigrated', 'SchemaJobFailed', { action, to, job: job.name });
        return out.stop();
      case 'waiting':
        out.set('SchemaMigrated', 'SchemaJobRunning', {
          action,
          to: upgrade ? pass.image : to,
          detail: job.detail,
        });
        return out.stop();
    }
  },
};
