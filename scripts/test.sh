#!/usr/bin/env bash
# The whole suite, as `npm test` runs it: formatting and lint, dead code (knip, knip.jsonc), typecheck,
# then every vitest project, ending with one plain "N passed, N failed" line (and any file that failed
# outside its tests, in its set-up or tear-down).
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
  // A file whose set-up or tear-down fails counts no failed test: name it, or the line reads green.
  const broken = r.testResults.filter((f) => f.status === "failed" && f.assertionResults.every((t) => t.status !== "failed"));
  for (const f of broken) console.log(`Failed outside its tests: ${require("node:path").relative(process.cwd(), f.name)}: ${f.message.split("\n")[0]}`);
' || true
exit "$status"
