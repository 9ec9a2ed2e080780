#!/usr/bin/env bash
# Cold and warm `npm start` time to ready, measured on a fresh clone of this repository in a
# temporary folder (nothing in .local/, no node_modules). "Cold" still profits from the machine's
# npm and Maven caches (~/.npm, ~/.m2); on a machine without them it adds the downloads.
# Uses the default ports (8080, 9092, 9093, 9464-9467): run it while no other stack is up.
# Run: bash bench/start-time.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/main"
ln -s "$repo/../shared" "$work/shared" 2>/dev/null || true
cd "$work/main"

measure() {
  local label=$1 log="$work/$1.log" start end pid
  start=$(date +%s.%N)
  setsid npm start >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1200); do
    if grep -q 'ready in' "$log"; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then echo "$label: npm start exited"; tail -20 "$log"; exit 1; fi
    sleep 0.1
  done
  end=$(date +%s.%N)
  seconds[$label]=$(echo "$end - $start" | bc)
  cli[$label]=$(grep -o 'ready in [0-9.]* s' "$log" | grep -o '[0-9.]*' || echo null)
  printf '%-5s npm start to ready: %6.1f s   (stack CLI alone: %s s)\n' "$label" "${seconds[$label]}" "${cli[$label]}"
  kill -INT -- -"$pid"
  wait "$pid" 2>/dev/null || true
}

declare -A seconds cli
measure cold
measure warm
# The last line: the figures as one JSON object (bench/figures.ts), on the Node the clone installed
# (the system's may be too old to run TypeScript).
node=$(ls "$work"/main/.local/node/node_modules/node-*/bin/node "$repo"/.local/node/node_modules/node-*/bin/node 2>/dev/null | head -1)
"${node:-node}" "$repo/bench/figures.ts" cold_start_to_ready_s="${seconds[cold]}" warm_start_to_ready_s="${seconds[warm]}" \
  cold_stack_cli_ready_s="${cli[cold]}" warm_stack_cli_ready_s="${cli[warm]}"
