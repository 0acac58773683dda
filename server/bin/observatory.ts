#!/usr/bin/env node
import module from 'node:module';

// V8's compiled code is kept on disk (the temp directory) and reused by the next run of the same
// sources: a role or a CLI command then starts in about half the time. Where that directory is not
// writable, Node carries on without it.
module.enableCompileCache();
const { main } = await import('../cli/main.ts');

process.exitCode = await main(process.argv.slice(2));
