# Sourced by the test script: a virtualenv in which the reference's Python CLI (from
# ../shared/reference/aigenora-src) runs as a test peer for test/interop. Idempotent: a venv whose stamp
# matches the pinned requirements is reused without touching the network.
#
# ensure_reference_peer exports
#   AIGENORA_REFERENCE_PYTHON  the venv's python (run it with PYTHONPATH=$AIGENORA_REFERENCE_SRC -m aigenora)
#   AIGENORA_REFERENCE_SRC     the reference's src/ folder
# and returns non-zero, saying why, when the source or a Python with venv is missing; the interop test then
# fails (or skips loudly) naming what is missing, so a broken set-up is never reported green.

# The reference pins iroh 0.35.0 and asks for cryptography>=42 and httpx>=0.27; pin the versions it was
# run with here so a new release cannot change the peer under the test.
REFERENCE_PEER_REQUIREMENTS=(iroh==0.35.0 cryptography==46.0.3 httpx==0.28.1)

ensure_reference_peer() {
  local repo src venv stamp want py
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  src=$(cd "$repo/.." && pwd)/shared/reference/aigenora-src/src
  venv="$repo/.cache/reference-venv"
  stamp="$venv/.aigenora-requirements"
  want="${REFERENCE_PEER_REQUIREMENTS[*]}"

  if [[ ! -f "$src/aigenora/__main__.py" ]]; then
    echo "reference-peer: the reference source is missing ($src/aigenora); the interop test cannot run" >&2
    return 1
  fi
  export AIGENORA_REFERENCE_SRC="$src"

  if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]] &&
    "$venv/bin/python" -c 'import iroh, cryptography, httpx' 2>/dev/null; then
    export AIGENORA_REFERENCE_PYTHON="$venv/bin/python"
    return 0
  fi

  py=$(command -v python3 || true)
  usable() { [[ -n "$py" ]] && "$py" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; }
  # Debian splits venv/ensurepip out of python3; toolchain.sh's apt_install adds it when we were sourced beside it.
  if ! usable && declare -F apt_install >/dev/null; then
    apt_install python3 python3-venv && py=$(command -v python3 || true)
  fi
  if ! usable; then
    echo "reference-peer: needs python3 >= 3.10 with the venv module (Debian: apt-get install python3-venv)" >&2
    return 1
  fi
  echo "reference-peer: creating $venv (pip install $want)"
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv "$venv" || return 1
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${REFERENCE_PEER_REQUIREMENTS[@]}" ||
    { echo "reference-peer: pip install failed" >&2; return 1; }
  "$venv/bin/python" -c 'import iroh, cryptography, httpx' || return 1
  echo "$want" >"$stamp"
  export AIGENORA_REFERENCE_PYTHON="$venv/bin/python"
}
