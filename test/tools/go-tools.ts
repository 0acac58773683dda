// The Go-built tools: helm and kubeconform live with the local cluster (cluster/go-tools.ts); the
// S3 server the blob-storage tests start is a test tool only, built and cached the same way.
import { ensureTool, type GoTool } from '../../cluster/go-tools.ts';

export * from '../../cluster/go-tools.ts';

/** Versity Gateway: an S3-compatible server over a plain directory (Apache-2.0, one binary). */
export const versitygw: GoTool = {
  name: 'versitygw',
  module: 'github.com/versity/versitygw',
  version: 'v1.8.0',
  pkg: 'github.com/versity/versitygw/cmd/versitygw',
  async ldflags() {
    return [`-X main.Version=${this.version}`];
  },
};

export const ensureVersitygw = (log?: (line: string) => void) => ensureTool(versitygw, log);
