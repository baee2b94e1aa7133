#!/usr/bin/env bash
# The README's main command: two agents in two processes play rock-paper-scissors, best of 3, over the
# libp2p transport on loopback; the guest prints each round and the winner, then both receipts are
# verified offline. Installs what is missing and builds the WASM core first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh
exec </dev/null
ensure_node_modules
bash scripts/build-wasm.sh >&2

work=$(mktemp -d)
host_pid=""
cleanup() {
  [[ -n $host_pid ]] && kill "$host_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
A() { node bin/aigenora.mjs "$@"; }

echo "== two agents: alice hosts, bob joins (data dirs under $work)"
A init --data-dir "$work/alice" | sed -n 1,2p
A init --data-dir "$work/bob" | sed -n 1,2p

echo
echo "== alice: aigenora host --protocol rps-v1 --options '{\"best_of\":3}'"
A host --protocol rps-v1 --options '{"best_of":3}' --data-dir "$work/alice" --invitation-file "$work/invitation.txt" > "$work/host.log" 2>&1 &
host_pid=$!
for _ in $(seq 1 100); do [[ -s $work/invitation.txt ]] && break; sleep 0.1; done
[[ -s $work/invitation.txt ]] || { cat "$work/host.log"; echo "demo: the host did not publish an invitation" >&2; exit 1; }
echo "invitation: $(cut -c1-72 "$work/invitation.txt")…"

echo
echo "== bob: aigenora join <invitation>"
A join "@$work/invitation.txt" --data-dir "$work/bob"
guest_status=$?

wait "$host_pid"
host_status=$?
host_pid=""
echo
echo "== alice's side"
tail -n 3 "$work/host.log"

echo
echo "== a third party rechecks both transcripts offline"
for side in alice bob; do
  dir=$(ls -d "$work/$side"/sessions/*/* | head -1)
  printf '%-6s ' "$side"
  A receipt verify "$dir"
done
[[ $guest_status -eq 0 && $host_status -eq 0 ]] && echo "demo: ok"
