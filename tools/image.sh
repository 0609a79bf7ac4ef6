#!/usr/bin/env bash
# image.sh: the container image of replay (Containerfile), built with
# Debian's podman, without a daemon and without downloading any image.
#
#   bash tools/image.sh build    # make image
#   bash tools/image.sh test     # make test-image (as root)
#
# build: builds a static replay (CGO_ENABLED=0 go build ./cmd/replay) into
# bin/image/, beside the /etc/passwd and /etc/group of its non-root user and
# an empty /tmp, and runs `podman build -f Containerfile bin/image`. The
# Containerfile is FROM scratch, so nothing is pulled. The image is tagged
# $IMAGE (the Makefile's REGISTRY/replay:VERSION, localhost/replay:<git
# describe> by default).
#
# test: as root, builds the image, then runs it under podman with Debian's
# runc (`podman --runtime runc run`: podman's default crun fails on this
# machine kind, on setrlimit and on its hybrid cgroups) and with ulimits
# below the machine's own (--ulimit nofile=1024:1024 --ulimit nproc=1024:1024):
#   1. builds bin/replay on the host (an ordinary build) and generates two
#      small traces (PTX uniform, SASS histogram); the host replays each:
#      the reference tables;
#   2. in the container, as its own user, replays each trace into a
#      directory of the host mounted at /data;
#   3. runs the Kubernetes recipe in the container: the arguments of
#      deploy/k8s/split-indexed-job.yaml once per index (JOB_COMPLETION_INDEX
#      0..M-1, REPLAY_SLICES M and REPLAY_PARTITIONS N, as the Indexed Job
#      sets them), then those of deploy/k8s/replay-indexed-job.yaml once per
#      index (0..N-1), then those of deploy/k8s/merge-job.yaml;
#   4. checks from the host with DuckDB (tools/cluster-check.mjs) that every
#      table the containers wrote is there and equals the reference's, and
#      that the partitions together hold the reference's memory and results.
# The temporary directory is removed on success and kept on failure.
#
# Environment: GO (go), IMAGE (localhost/replay:dev), VERSION (the image's
# version label), IMAGE_KEEP=1 keeps the temporary directory on success too.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
GO=${GO:-go}
IMAGE=${IMAGE:-localhost/replay:dev}
VERSION=${VERSION:-dev}
START=$SECONDS
# How podman runs a container on this machine kind (see above).
RUN=(podman --runtime runc run --rm --pull=never --network=none
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

say() { echo "image: $*"; }
fail() {
  echo "image: FAIL: $*" >&2
  exit 1
}

# install_podman installs Debian's podman and runc when missing: as root
# through apt-get, else it says how.
install_podman() {
  local need=()
  command -v podman >/dev/null || need+=(podman)
  command -v runc >/dev/null || need+=(runc)
  [ ${#need[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    fail "missing ${need[*]}; install them (Debian: apt-get install -y ${need[*]}) or run this as root"
  fi
  command -v apt-get >/dev/null || fail "missing ${need[*]}, and this machine has no apt-get: install them with its package manager"
  say "installing ${need[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
    fail "apt-get install ${need[*]} failed"
  for c in podman runc; do
    command -v "$c" >/dev/null || fail "$c not found after installing ${need[*]}"
  done
}

build() {
  install_podman
  local ctx=bin/image
  rm -rf "$ctx"
  mkdir -p "$ctx/tmp"
  CGO_ENABLED=0 $GO build -trimpath -o "$ctx/replay" ./cmd/replay || fail "CGO_ENABLED=0 go build ./cmd/replay failed"
  printf 'root:x:0:0:root:/:/usr/local/bin/replay\nreplay:x:65534:65534:replay:/tmp:/usr/local/bin/replay\n' >"$ctx/passwd"
  printf 'root:x:0:\nreplay:x:65534:\n' >"$ctx/group"
  podman build --pull=never --build-arg VERSION="$VERSION" -f Containerfile -t "$IMAGE" "$ctx" >/dev/null ||
    fail "podman build -f Containerfile $ctx failed"
  say "built $IMAGE ($(podman image inspect --format '{{.Size}}' "$IMAGE") bytes, FROM scratch)"
}

# yamlArgs FILE prints the container's args of a Job manifest, one a line
# (the args line is a flow sequence of JSON strings).
yamlArgs() {
  local line
  line=$(sed -n 's/^ *args: *\(\[.*\]\) *$/\1/p' "$1")
  [ -n "$line" ] || fail "$1: no args: [...] line"
  node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "$line"
}

test_image() {
  [ "$(id -u)" -eq 0 ] || fail "run as root: podman runs the containers as root here (and it may install podman and runc)"
  command -v node >/dev/null || fail "node not found (Debian: apt-get install -y nodejs npm)"
  [ -f tools/duckdb/node_modules/@duckdb/node-api/package.json ] ||
    fail "no @duckdb/node-api: run npm ci --prefix tools/duckdb (make test-image does)"
  build

  T=$(mktemp -d /tmp/replay-image.XXXXXX)
  LABEL="replay-test-image=$T"
  trap cleanup EXIT
  local user
  user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
  [ "$user" = "65534:65534" ] || fail "$IMAGE runs as '$user', want 65534:65534"

  # 1. The host's replay, its traces and their reference tables.
  $GO build -o bin/replay ./cmd/replay || fail "go build ./cmd/replay failed"
  local R=$ROOT/bin/replay t
  mkdir -p "$T/ref"
  "$R" gen uniform -dialect ptx -words 64Ki -lane-ops 2e5 -seed 7 -q -o "$T/uniform-ptx.zst" || fail "replay gen uniform failed"
  "$R" gen histogram -dialect sass -bins 4096 -zipf 1.1 -lane-ops 1e5 -seed 7 -q -o "$T/histogram-sass.zst" ||
    fail "replay gen histogram failed"
  for t in uniform-ptx histogram-sass; do
    "$R" "$T/$t.zst" -o "$T/ref/$t" -q || fail "the host's replay of $t failed"
  done

  # 2. Each trace replayed in the container, into the mounted directory.
  for t in uniform-ptx histogram-sass; do
    mkdir -p "$T/$t"
    cp "$T/$t.zst" "$T/$t/trace.zst"
    chown -R 65534:65534 "$T/$t"
    "${RUN[@]}" --label "$LABEL" -v "$T/$t:/data" "$IMAGE" /data/trace.zst -o /data/tables -q ||
      fail "$t: replay in the container failed"
    [ "$(stat -c %u "$T/$t/tables/memory.parquet")" = 65534 ] ||
      fail "$t: the container's tables are not owned by its user 65534"
  done
  say "replayed both traces in the container ($((SECONDS - START)) s so far)"

  # 3. The Kubernetes recipe, its manifests' arguments and environment:
  # the split Job's indices, then the partition Job's, then the merge.
  local N M i
  N=$(sed -n '/name: REPLAY_PARTITIONS/{n;s/^ *value: *"\([0-9]*\)".*/\1/p}' deploy/k8s/replay-indexed-job.yaml)
  [ -n "$N" ] || fail "deploy/k8s/replay-indexed-job.yaml: no REPLAY_PARTITIONS value"
  M=$(sed -n '/name: REPLAY_SLICES/{n;s/^ *value: *"\([0-9]*\)".*/\1/p}' deploy/k8s/split-indexed-job.yaml)
  [ -n "$M" ] || fail "deploy/k8s/split-indexed-job.yaml: no REPLAY_SLICES value"
  mapfile -t splitArgs < <(yamlArgs deploy/k8s/split-indexed-job.yaml)
  mapfile -t partArgs < <(yamlArgs deploy/k8s/replay-indexed-job.yaml)
  mapfile -t mergeArgs < <(yamlArgs deploy/k8s/merge-job.yaml)
  local K=$T/uniform-ptx # its /data/trace.zst is the trace the manifest reads
  for ((i = 0; i < M; i++)); do
    "${RUN[@]}" --label "$LABEL" -v "$K:/data" -e JOB_COMPLETION_INDEX=$i -e REPLAY_SLICES="$M" -e REPLAY_PARTITIONS="$N" \
      --entrypoint replay "$IMAGE" "${splitArgs[@]}" || fail "the split Job's index $i failed in the container"
  done
  for ((i = 0; i < N; i++)); do
    "${RUN[@]}" --label "$LABEL" -v "$K:/data" -e JOB_COMPLETION_INDEX=$i -e REPLAY_PARTITIONS="$N" \
      --entrypoint replay "$IMAGE" "${partArgs[@]}" || fail "the partition Job's index $i failed in the container"
  done
  "${RUN[@]}" --label "$LABEL" -v "$K:/data" --entrypoint replay "$IMAGE" "${mergeArgs[@]}" ||
    fail "the merge Job failed in the container"
  say "ran the Kubernetes recipe in the container: $M split tasks (${splitArgs[*]}), $N partitions (${partArgs[*]}), then ${mergeArgs[*]}"

  # 4. The tables, read from the host with DuckDB.
  for t in uniform-ptx histogram-sass; do
    node tools/cluster-check.mjs -reference "$T/ref/$t" -merged "$T/$t/tables" -name "$t in the container" ||
      fail "$t: the container's tables differ from the host's replay"
  done
  node tools/cluster-check.mjs -reference "$T/ref/uniform-ptx" -partitions "$K/out" -n "$N" \
    -merged "$K/merged" -name "uniform-ptx, Kubernetes recipe in the container" ||
    fail "the Kubernetes recipe's tables differ from the host's replay"
  say "PASS: $IMAGE replayed in podman (runc) equals the host's replay, and so does its Kubernetes recipe ($((SECONDS - START)) s)"
}

cleanup() {
  local rc=$? left
  trap - EXIT
  left=$(podman ps -aq --filter "label=$LABEL" 2>/dev/null || true)
  if [ -n "$left" ]; then
    # shellcheck disable=SC2086
    podman rm -f $left >/dev/null 2>&1 || true
  fi
  if [ "$rc" -eq 0 ] && [ -z "${IMAGE_KEEP:-}" ]; then
    rm -rf "$T"
  else
    echo "image: kept $T" >&2
  fi
  exit "$rc"
}

case ${1:-} in
build) build ;;
test) test_image ;;
*)
  echo "usage: bash tools/image.sh build|test" >&2
  exit 2
  ;;
esac
