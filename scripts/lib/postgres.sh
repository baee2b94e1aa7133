#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the registry server's tests: Debian's postgresql (installed when
# missing), initdb in a temporary directory, listening on 127.0.0.1 on a free port, trust auth, removed
# on exit. Exports AIGENORA_TEST_PG_URL; the server suites then also run against PostgreSQL (without it
# they fail, unless AIGENORA_SKIP_CORPORA=1 asks to skip them: test/shared/require.ts).
#
#   source scripts/lib/postgres.sh; start_test_postgres     # in a script (chains onto its EXIT trap)
#   bash scripts/lib/postgres.sh                            # by hand: prints the URL, runs until ^C

_pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [[ -n "$d" && -x "$d/initdb" ]] && echo "$d"
}

# initdb and postgres refuse to run as root: run them as the postgres user (or nobody) then.
_pg_as() {
  if [[ $(id -u) -eq 0 ]]; then
    local user=postgres
    id -u postgres >/dev/null 2>&1 || user=nobody
    runuser -u "$user" -- "$@"
  else
    "$@"
  fi
}

_pg_free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

stop_test_postgres() {
  [[ -n "${_AIGENORA_PG_DIR:-}" ]] || return 0
  _pg_as "$(_pg_bin)/pg_ctl" stop -D "$_AIGENORA_PG_DIR/data" -m immediate >/dev/null 2>&1 || true
  rm -rf "$_AIGENORA_PG_DIR"
  _AIGENORA_PG_DIR=
}

start_test_postgres() {
  local bin
  bin=$(_pg_bin) || true
  if [[ -z "$bin" ]]; then
    echo "postgres: installing Debian's postgresql (initdb is missing)"
    if [[ $(id -u) -eq 0 ]]; then
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } || true
    fi
    bin=$(_pg_bin) || true
  fi
  if [[ -z "$bin" ]]; then
    echo "postgres: PostgreSQL is not installed and could not be installed: the [postgres] suites will fail"
    return 0
  fi
  _AIGENORA_PG_DIR=$(mktemp -d /tmp/aigenora-pg.XXXXXX)
  chmod 755 "$_AIGENORA_PG_DIR"
  [[ $(id -u) -eq 0 ]] && chown "$(id -u postgres >/dev/null 2>&1 && echo postgres || echo nobody)" "$_AIGENORA_PG_DIR"
  # Chain onto the caller's EXIT trap instead of replacing it.
  local prev
  eval "prev=$(trap -p EXIT | sed -E 's/^trap -- //; s/ EXIT$//')"
  trap "stop_test_postgres; ${prev:-}" EXIT
  local port
  port=$(_pg_free_port)
  if ! _pg_as "$bin/initdb" -D "$_AIGENORA_PG_DIR/data" -U postgres --auth=trust -E UTF8 --no-sync >"$_AIGENORA_PG_DIR/initdb.log" 2>&1; then
    cat "$_AIGENORA_PG_DIR/initdb.log" >&2
    echo "postgres: initdb failed: the [postgres] suites will fail"
    stop_test_postgres
    return 0
  fi
  if ! _pg_as "$bin/pg_ctl" start -w -D "$_AIGENORA_PG_DIR/data" -l "$_AIGENORA_PG_DIR/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $_AIGENORA_PG_DIR -c fsync=off -c max_connections=200" >/dev/null; then
    cat "$_AIGENORA_PG_DIR/server.log" >&2
    echo "postgres: PostgreSQL did not start: the [postgres] suites will fail"
    stop_test_postgres
    return 0
  fi
  export AIGENORA_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/postgres"
  echo "postgres: test cluster at $AIGENORA_TEST_PG_URL ($("$bin/postgres" --version))"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  start_test_postgres
  [[ -n "${AIGENORA_TEST_PG_URL:-}" ]] || exit 1
  echo "AIGENORA_TEST_PG_URL=$AIGENORA_TEST_PG_URL"
  echo "(Ctrl-C stops and removes the cluster)"
  trap 'exit 0' INT TERM
  # wait (not a bare sleep) so a signal runs the trap at once.
  while :; do sleep 3600 & wait $!; done
fi
