#!/usr/bin/env bash
# test-prereqs.sh: installs the programs the tests run that a fresh machine
# with only Go, Node.js and make lacks, so that `make test` passes there:
#   zstd      the binary-trace tests check that `zstd -d` reads our traces;
#   chromium  renders replay report's page in the browser test.
# Debian's packages, through apt-get, as root (or through sudo when it asks
# for no password). The npm packages (DuckDB's reader, playwright-core) are
# the Makefile's own targets. When a program is missing and cannot be
# installed, it says which and how, and fails: `make test` then stops here,
# before any test, rather than later in the one test that needs it.
set -euo pipefail
say() { echo "test-prereqs: $*" >&2; }

need=()
command -v zstd >/dev/null || need+=(zstd)
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || need+=(chromium)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  say "missing ${need[*]}; install them (Debian: apt-get install -y ${need[*]}) or run make test as root"
  exit 1
fi
command -v apt-get >/dev/null || {
  say "missing ${need[*]}, and this machine has no apt-get: install them with its package manager"
  exit 1
}
say "installing ${need[*]} (apt-get)"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
for c in "${need[@]}"; do
  case $c in
  chromium) [ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { say "chromium not at ${CHROMIUM:-/usr/bin/chromium} after installing it"; exit 1; } ;;
  nodejs) command -v node >/dev/null || { say "node not found after installing nodejs"; exit 1; } ;;
  *) command -v "$c" >/dev/null || { say "$c not found after installing it"; exit 1; } ;;
  esac
done
