/**
 * Once for the browser project: installs Debian's chromium when missing (a visible step with its
 * time; apt-get behind the same lock as the datastores' packages) and builds the web UI.
 */
import { existsSync } from 'node:fs';
import { ensureAptPackages } from '../../cluster/datastores/processes.ts';
import { stepReporter } from '../../cluster/steps.ts';
import { ensureUiBuilt } from '../../scripts/build-ui.ts';
import { CHROMIUM, chromiumVersion } from './chromium.ts';

export default async function setup(): Promise<void> {
  const steps = stepReporter((line) => process.stderr.write(`[browser] ${line}\n`));
  if (existsSync(CHROMIUM)) steps.cached('Debian package chromium', chromiumVersion());
  else {
    await steps.run('Debian package chromium (apt-get install)', () =>
      ensureAptPackages(['chromium'], () => existsSync(CHROMIUM)),
    );
    process.stderr.write(`[browser] ${chromiumVersion()}\n`);
  }
  await ensureUiBuilt();
}
