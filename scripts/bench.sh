#!/usr/bin/env bash
# `npm run bench`: builds (dist/ and the WASM bindings; --no-build skips it), then runs every bench
# file, or only those named (`bash scripts/bench.sh spec trade`), one after another. A bench whose
# floor is missed still exits 0 and the run goes on; a bench that cannot run exits non-zero, which
# is reported and the others still run. At the end bench/floors.ts writes bench/results/floors.md:
# every floor of every bench of this run, what could not run, the run's times, load and Node (a run of
# some benches only prints that table, so floors.md always describes a full run).
# Exits 1 when a bench could not run.
set -uo pipefail
cd "$(dirname "$0")/.."
exec </dev/null

ALL=(crypto trade spec engine mp mp-game net many-sessions web realtime group registry package rin rin-control aira)
build=1
names=()
for a in "$@"; do
  case $a in
    --no-build) build=0 ;;
    -*) echo "bench: unknown option $a" >&2; exit 2 ;;
    *)
      [[ -f bench/$a.bench.ts ]] || { echo "bench: no bench/$a.bench.ts (benches: ${ALL[*]})" >&2; exit 2; }
      names+=("$a")
      ;;
  esac
done
partial=(--partial)
((${#names[@]})) || { names=("${ALL[@]}"); partial=(); }

start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
if ((build)); then
  bash scripts/build.sh || { echo "bench: the build failed, no bench was run" >&2; exit 1; }
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/aigenora-bench.XXXXXX")
status=()
failed=()
for n in "${names[@]}"; do
  rm -f "bench/results/$n.floors.json"
  echo "== bench/$n.bench.ts" >&2
  t0=$(date +%s)
  node_modules/.bin/tsx "bench/$n.bench.ts" 2> >(tee "$logs/$n.err" >&2)
  rc=$?
  wait
  status+=("$n:$rc:$(($(date +%s) - t0))")
  if ((rc != 0)); then
    failed+=("$n")
    echo "== bench/$n.bench.ts COULD NOT RUN (exit $rc); going on with the others" >&2
  fi
done

node_modules/.bin/tsx bench/floors.ts --start "$start" --load "$load0" --logs "$logs" "${partial[@]}" "${status[@]}"
rc=$?
rm -rf "$logs"
if ((${#failed[@]})); then
  echo "bench: could not run: ${failed[*]} (see bench/results/floors.md)" >&2
  exit 1
fi
exit $rc
