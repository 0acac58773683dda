// Builds the control plane once before the API server tests (a fresh machine has no cache), so no
// test's timeout has to cover the cold Go build.
import { ensureControlPlane } from '../../cluster/control-plane-binary.ts';

export default async function setup(): Promise<void> {
  await ensureControlPlane((line) => console.log(`[api-server] ${line}`));
}
