#!/usr/bin/env bash
# npm-deps.sh — owns installing the Node packages Strobe's tests use: the
# devDependencies of the repository's package.json, at the exact versions
# pinned in package-lock.json, into <repo>/node_modules (`npm ci`). To add a
# package: `npm install --save-dev --save-exact NAME@VERSION` at the root and
# commit both files.
#
# Idempotent and quiet: it does nothing when node_modules was installed from
# the current package.json and package-lock.json (a stamp holds their hash).
# Safe to run from several test processes at once (flock): the first
# installs, the others wait and find the stamp.
set -euo pipefail

# usage: npm-deps.sh [repository root]   (default: this script's repository)
root=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
cd "$root"
if ! command -v npm > /dev/null; then
  echo "npm-deps.sh: npm is missing (scripts/deps.sh installs nodejs and npm)" >&2
  exit 1
fi

stamp=node_modules/.strobe-npm-deps
want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
lock="${TMPDIR:-/tmp}/strobe-npm-deps-$(printf '%s' "$root" | sha256sum | cut -c1-16).lock"

exec 9> "$lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "npm-deps.sh: installing Node packages into $root/node_modules"
npm ci --no-audit --no-fund --loglevel=error
echo "$want" > "$stamp"
