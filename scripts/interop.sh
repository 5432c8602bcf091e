#!/usr/bin/env bash
# Interop tests against real MCP peers (see shared/PEERS.md, tests/fixtures/PEER_NOTES.md).
#
# 1. installs/validates the pinned peers (scripts/install-peers.sh, fast when present)
# 2. exports MCP_NODE, MCP_EVERYTHING_JS, MCP_CONFORMANCE_JS, MCP_PYTHON
# 3. runs the interop test target(s) one test at a time
#
# The interop tests never skip: they panic if a variable is missing, so this
# script refuses to start them unless every variable names an existing file.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '[interop] %s\n' "$*" >&2; }
die() { printf '[interop] ERROR: %s\n' "$*" >&2; exit 1; }

bash "$ROOT/scripts/install-peers.sh" || die "scripts/install-peers.sh failed"

ENV_FILE="$ROOT/.peers/env.sh"
[ -f "$ENV_FILE" ] || die "$ENV_FILE missing after install-peers.sh"
# shellcheck source=/dev/null
. "$ENV_FILE"

for var in MCP_NODE MCP_EVERYTHING_JS MCP_CONFORMANCE_JS MCP_PYTHON; do
  val="${!var:-}"
  [ -n "$val" ] || die "$var is not set by $ENV_FILE"
  [ -f "$val" ] || die "$var points to a missing file: $val"
  # shellcheck disable=SC2163 # exports the variable whose name is in $var
  export "$var"
  log "$var=$val"
done
node_v="$("$MCP_NODE" --version)" || die "$MCP_NODE --version failed"
[[ "$node_v" == v22.* ]] || die "MCP_NODE is $node_v, expected v22.x"
[ -f "$ROOT/tests/fixtures/py_server.py" ] || die "tests/fixtures/py_server.py missing"

# ---- stdio interop tests ----------------------------------------------------
log "cargo build --example mcp (the CLI under test)"
cargo build --example mcp
export MCP_CLI="$ROOT/target/debug/examples/mcp"
[ -x "$MCP_CLI" ] || die "the CLI was not built at $MCP_CLI"
log "cargo test --features interop --test interop_stdio -- --test-threads=1"
cargo test --features interop --test interop_stdio -- --test-threads=1
log "cargo test --features interop --test interop_handlers -- --test-threads=1"
cargo test --features interop --test interop_handlers -- --test-threads=1

# ---- CONFORMANCE RUN: TO BE ADDED -------------------------------------------
# The official client conformance suite goes here, e.g.
#   "$MCP_NODE" "$MCP_CONFORMANCE_JS" client --command "<client program>" \
#       --suite all --spec-version 2025-11-25 -o "$ROOT/target/conformance/2025-11-25" \
#       --expected-failures "$ROOT/conformance/expected-failures.yml"
# (and --spec-version 2026-07-28, --suite extensions). It must fail this script
# on any unexpected failure or stale expected-failure entry.
# ---- END CONFORMANCE RUN ----------------------------------------------------

log "interop OK"
