#!/usr/bin/env bash
# Fails when a file tracked by git is over 1 MiB, unless its path is listed in
# tools/large-fixtures.txt (one path per line, # comments). Build outputs and
# binaries never belong in the repository; generated data is made by tests.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((1 << 20))
allowed=tools/large-fixtures.txt
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue # deleted in the work tree, not yet committed
  size=$(wc -c <"$f")
  [ "$size" -le "$limit" ] && continue
  if [ -f "$allowed" ] && grep -qxF -- "$f" <(sed 's/#.*//; s/[[:space:]]*$//' "$allowed"); then
    continue
  fi
  echo "check-sizes: $f is $size bytes, over 1 MiB; a fixture that must be this large goes in $allowed" >&2
  bad=1
done < <(git ls-files -z)
exit $bad
