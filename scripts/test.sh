#!/usr/bin/env bash
# The whole suite, as `npm test` runs it: formatting and lint, dead code (knip, knip.jsonc), typecheck,
# then every vitest project, ending with one plain "N passed, N failed" line.
set -euo pipefail
biome check .
knip --no-progress
tsc --noEmit -p .
mkdir -p .cache
status=0
vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest-report.json "$@" || status=$?
node -e '
  const r = JSON.parse(require("node:fs").readFileSync(".cache/vitest-report.json", "utf8"));
  console.log(`Tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' || true
exit "$status"
