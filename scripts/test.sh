#!/usr/bin/env bash
# The whole suite, as `npm test` runs it: formatting and lint, typecheck, then every vitest project.
set -euo pipefail
biome check .
tsc --noEmit -p .
vitest run "$@"
