/** The schema Job of a pass (migrate up, or the rollback to release 3's version); it owns SchemaMigrated. */
import { RELEASE_3_SCHEMA_VERSION } from '../../../server/contract/schema-versions.ts';

import { ensureJob } from '../jobs.ts';
import { passOf } from '../pass.ts';
import { isRelease4 } from '../states.ts';
import { type Step, StepOutput } from '../step.ts';

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
        out.set('SchemaMigrated', 'SchemaJobFailed', { action, to, job: job.name });
        return out.stop();
      case 'waiting':
        out.set('SchemaMigrated', 'SchemaJobRunning', { action, to, detail: job.detail });
        return out.stop();
    }
  },
};
