#!/usr/bin/env bash
# Interop tests against real MCP peers (see shared/PEERS.md, tests/fixtures/PEER_NOTES.md).
#
# 1. installs/validates the pinned peers (scripts/install-peers.sh, fast when present)
# 2. exports MCP_NODE, MCP_EVERYTHING_JS, MCP_CONFORMANCE_JS, MCP_PYTHON
# 3. runs the interop test binary (tests/interop/) one module at a time,
#    one test at a time, starting what each module needs in between
#
# The interop tests never skip: they panic if a variable is missing, so this
# script refuses to start them unless every variable names an existing file.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '[interop] %s\n' "$*" >&2; }
# `scripts/interop.sh fastmcp` (or `inspect`): install the peers, build the
# CLI and run only the FastMCP part (or the browser tests of `mcp inspect`);
# with no argument, everything.
ONLY="${1:-}"
case "$ONLY" in ""|fastmcp|inspect) ;; *) printf '[interop] ERROR: unknown part %s (only: fastmcp, inspect)\n' "$ONLY" >&2; exit 2 ;; esac
die() { printf '[interop] ERROR: %s\n' "$*" >&2; exit 1; }

bash "$ROOT/scripts/install-peers.sh" || die "scripts/install-peers.sh failed"

ENV_FILE="$ROOT/.peers/env.sh"
[ -f "$ENV_FILE" ] || die "$ENV_FILE missing after install-peers.sh"
# shellcheck source=/dev/null
. "$ENV_FILE"

for var in MCP_NODE MCP_EVERYTHING_JS MCP_CONFORMANCE_JS MCP_PYTHON MCP_TS_SERVER_JS MCP_OIDC_PROVIDER_JS MCP_APPS_VANILLAJS_DIR MCP_APPS_MONITOR_DIR MCP_FASTMCP_PYTHON MCP_FASTMCP_TASKS_PYTHON MCP_PLAYWRIGHT_DIR MCP_CHROMIUM MCP_TINYPROXY MCP_OPENSSL MCP_REDIS_SERVER MCP_SOCAT; do
  val="${!var:-}"
  [ -n "$val" ] || die "$var is not set by $ENV_FILE"
  [ -e "$val" ] || die "$var points to a missing file or folder: $val"
  # shellcheck disable=SC2163 # exports the variable whose name is in $var
  export "$var"
  log "$var=$val"
done
node_v="$("$MCP_NODE" --version)" || die "$MCP_NODE --version failed"
[[ "$node_v" == v22.* ]] || die "MCP_NODE is $node_v, expected v22.x"
[ -f "$ROOT/tests/fixtures/py_server.py" ] || die "tests/fixtures/py_server.py missing"

# ---- stdio interop tests ----------------------------------------------------
log "cargo build --features cli --bin mcp (the CLI under test)"
cargo build --features cli --bin mcp
export MCP_CLI="$ROOT/target/debug/mcp"
[ -x "$MCP_CLI" ] || die "the CLI was not built at $MCP_CLI"

# interop_tests MODULE [TEST]: the tests of tests/interop/MODULE.rs (or its
# one test TEST), one at a time. A filter that matched nothing would pass
# with nothing run, so the tests it matches are listed first: there must be
# some, all of MODULE, and the run must pass exactly as many.
interop_tests() {
  local module="$1" test="${2:-}" filter listed count run_log
  if [ -n "$test" ]; then filter=(--exact "$module::$test"); else filter=("$module::"); fi
  listed="$(cargo test --features interop --test interop -- "${filter[@]}" --list --format=terse)" \
    || die "cannot list the interop tests matching ${filter[*]}"
  listed="$(printf '%s\n' "$listed" | grep ': test$' || true)"
  count="$(printf '%s' "$listed" | grep -c . || true)"
  [ "$count" -gt 0 ] || die "no interop test matches ${filter[*]}"
  if printf '%s\n' "$listed" | grep -v "^$module::"; then
    die "the filter ${filter[*]} matches the tests above, outside tests/interop/$module.rs"
  fi
  log "cargo test --features interop --test interop -- ${filter[*]} --test-threads=1 ($count tests)"
  run_log="$(mktemp)"
  if ! cargo test --features interop --test interop -- "${filter[@]}" --test-threads=1 | tee "$run_log"; then
    rm -f "$run_log"
    die "interop tests failed: ${filter[*]}"
  fi
  if ! grep -q "^test result: ok. $count passed" "$run_log"; then
    rm -f "$run_log"
    die "expected $count passed interop tests for ${filter[*]}"
  fi
  rm -f "$run_log"
}

# ---- FastMCP 4.1.6 through the mcp command ---------------------------------
# tests/fixtures/fastmcp_server.py over stdio and streamable HTTP, driven
# through $MCP_CLI under the default protocol choice: a tool that elicits
# (answered with --accept-defaults) and one that lists roots (--root DIR)
# both succeed, on the initialize era the default profile chooses for
# FastMCP 4 (legacy_era_for_mrtr_less_servers, reported as applied); a
# FastMCP server it cannot recognize gets the hint, and works with the
# one-line config ("x-mcp-stack": {"protocol": "legacy"}).
# `scripts/interop.sh fastmcp` runs this part alone.
run_fastmcp() {
  interop_tests fastmcp
}
if [ "$ONLY" = "fastmcp" ]; then
  run_fastmcp
  log "interop (fastmcp only) OK"
  exit 0
fi
if [ "$ONLY" = "inspect" ]; then
  interop_tests inspect
  log "interop (inspect only) OK"
  exit 0
fi

interop_tests stdio
# The example transport examples/unix_socket/ (the public Transport traits
# alone) against server-everything on a Unix socket served by socat
# ($MCP_SOCAT): a call, the server killed mid-call, a missing socket, a
# close that leaves no process behind.
interop_tests unix_socket
interop_tests handlers
# Tasks (2025-11-25): everything's simulate-research-query, a `required` task
# tool, run through call_tool, followed stage by stage to its result, asking
# for clarification through the elicitation handler, and cancelled.
interop_tests tasks

# ---- the README's first commands against server-everything ----------------
EVERYTHING_CMD="$MCP_NODE $MCP_EVERYTHING_JS stdio"
log "cargo run --example quickstart -- --stdio <server-everything>: a successful tool result"
quickstart_out="$(cargo run --quiet --example quickstart -- --stdio "$EVERYTHING_CMD")" \
  || die "the quickstart failed against server-everything"
printf '%s\n' "$quickstart_out" | tail -n 3 >&2
printf '%s\n' "$quickstart_out" | grep -q '^result: ' || die "the quickstart printed no tool result"
if printf '%s\n' "$quickstart_out" | grep -q 'not a result'; then die "the quickstart's first call was refused"; fi

# `cargo install` as the README says (--debug reuses this target dir's build).
INSTALL_ROOT="$(mktemp -d)"
log "cargo install --path . --features cli --root $INSTALL_ROOT --debug"
CARGO_TARGET_DIR="$ROOT/target" cargo install --quiet --locked --path . --features cli --root "$INSTALL_ROOT" --debug
[ -x "$INSTALL_ROOT/bin/mcp" ] || die "cargo install did not install $INSTALL_ROOT/bin/mcp"
# A closed stdout (head) ends the command quietly, exit 0.
first_tool="$("$INSTALL_ROOT/bin/mcp" --stdio "$EVERYTHING_CMD" tools | head -n 1; echo "rc=${PIPESTATUS[0]}")"
log "mcp tools | head -n 1: $first_tool"
[[ "$first_tool" == *"rc=0" ]] || die "mcp tools | head -n 1 did not exit 0"
# The installed command with a config file of server-everything and the
# Python server: servers, tools --json, call mcp__NAME__TOOL (docs/command.md's
# `mcp --config mcp.json ...`), the same test as above run against DIR/bin/mcp.
log "MCP_CLI=$INSTALL_ROOT/bin/mcp: --config FILE servers / tools --json / call mcp__py__add"
MCP_CLI="$INSTALL_ROOT/bin/mcp" interop_tests stdio cli_with_a_config_of_server_everything_and_the_python_server
rm -rf "$INSTALL_ROOT"

# ---- HTTP interop tests -----------------------------------------------------
# server-everything in streamableHttp and sse modes, the Python server over
# streamable HTTP (restarted mid-test: a forgotten session). Each test starts
# its servers on free ports and kills them when it ends.
interop_tests http

# ---- a host of three servers ------------------------------------------------
# The demo server in-process, server-everything over stdio and the Python
# server over streamable HTTP as one Host: merged catalog, routing by model
# name, refusals before any I/O, a killed server (each of the two real ones)
# while the others serve, a removed binding, a bounded close.
interop_tests host
# What a model sees over the same three servers: a deferred conversation
# that searches, loads, calls, and reads an oversized result back whole.
interop_tests model_view

# ---- 2026-07-28 interop -----------------------------------------------------
# The Python SDK's modern server (tests/fixtures/py_modern_server.py) over
# stdio and streamable HTTP with the automatic protocol choice: discover,
# _meta, MRTR elicitation and roots, an x-mcp-header argument,
# subscriptions/listen (list_changed, resource updates), a dropped call; and
# the TypeScript SDK v2 server (tests/fixtures/ts_server.mjs) the same way, and
# refusing the legacy era, its subscriptions/listen over HTTP (list_changed,
# resource updates), a dropped call cancelled over stdio and HTTP, and the CLI
# ($MCP_CLI) reporting 2026-07-28; server-everything (legacy only) through the
# fallback.
interop_tests modern_era
# The 2026-07-28 Tasks extension, served by a Python SDK server of it
# (tests/fixtures/py_tasks_server.py, which refuses a tasks/get, tasks/update
# or tasks/cancel whose Mcp-Name is not its task id): followed to its result, input asked through
# the elicitation handler, cancelled, and a task started by one mcp process
# taken up by id by another.
interop_tests tasks_extension
# The same server against the conformance suite's tasks-* server scenarios
# (the Tasks extension's fixture tools are in it too): each scenario must
# exit 0, report no failed check and pass at least one, but the placeholder
# tasks-status-notifications (always skipped). Logs and checks.json files in
# target/conformance/tasks-server/, the server's stderr in server.log there.
TASKS_SERVER_SCENARIOS=(tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
  tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
  tasks-required-task-error tasks-mrtr-composition)
# stop_server PID: SIGTERM, up to 10 s to exit, then SIGKILL; reaped.
stop_server() {
  local waited=0
  kill "$1" 2>/dev/null || return 0
  while kill -0 "$1" 2>/dev/null && [ "$waited" -lt 100 ]; do sleep 0.1; waited=$((waited + 1)); done
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
# free_port: a loopback port nothing listens on right now.
free_port() {
  "$MCP_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
    || die "cannot pick a free port"
}
# start_listening NAME PORT LOG SECONDS COMMAND...: starts COMMAND in the
# background (its output in LOG), stopped however this script ends (die
# exits; `trap - EXIT` once it is stopped on purpose), and waits at most
# SECONDS until it listens on PORT. Sets LISTENING_PID.
start_listening() {
  local name="$1" port="$2" log_file="$3" limit="$4" waited=0
  shift 4
  "$@" > "$log_file" 2>&1 &
  LISTENING_PID=$!
  # shellcheck disable=SC2064 # the pid is meant to be expanded now
  trap "stop_server $LISTENING_PID" EXIT
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    kill -0 "$LISTENING_PID" 2>/dev/null || { cat "$log_file" >&2; die "$name exited before listening"; }
    [ "$waited" -lt $((limit * 10)) ] || { cat "$log_file" >&2; die "$name not listening on $port after $limit s"; }
    sleep 0.1
    waited=$((waited + 1))
  done
}
tasks_server_conformance() {
  local out="$ROOT/target/conformance/tasks-server" port pid scenario log_file rc totals passed failed
  rm -rf "$out"
  mkdir -p "$out"
  port="$(free_port)"
  log "tests/fixtures/py_tasks_server.py on 127.0.0.1:$port"
  start_listening py_tasks_server.py "$port" "$out/server.log" 60 \
    "$MCP_PYTHON" "$ROOT/tests/fixtures/py_tasks_server.py" "$port"
  pid="$LISTENING_PID"
  for scenario in "${TASKS_SERVER_SCENARIOS[@]}"; do
    log_file="$out/$scenario.log"
    log "conformance server scenario $scenario (py_tasks_server.py)"
    rc=0
    timeout 300 "$MCP_NODE" "$MCP_CONFORMANCE_JS" server --url "http://127.0.0.1:$port/mcp" \
      --scenario "$scenario" -o "$out" > "$log_file" 2>&1 || rc=$?
    sed -n '/Test Results:/,$p' "$log_file"
    # The suite exits 1 on a failed check (124: timeout killed it).
    [ "$rc" -eq 0 ] || { tail -n 60 "$log_file" >&2; tail -n 20 "$out/server.log" >&2; die "conformance server scenario $scenario failed (exit $rc)"; }
    # Its totals line: "Passed: P/N, F failed, W warnings".
    totals="$(sed -n 's|^Passed: \([0-9]*\)/[0-9]*, \([0-9]*\) failed.*|\1 \2|p' "$log_file" | tail -n 1)"
    [ -n "$totals" ] || { tail -n 60 "$log_file" >&2; die "conformance server scenario $scenario reported no totals"; }
    read -r passed failed <<< "$totals"
    [ "$failed" -eq 0 ] || die "conformance server scenario $scenario reported $failed failed checks"
    if [ "$passed" -eq 0 ] && [ "$scenario" != tasks-status-notifications ]; then
      die "conformance server scenario $scenario passed nothing"
    fi
  done
  trap - EXIT
  stop_server "$pid"
  log "conformance tasks-* server scenarios: all passed (results in $out)"
}
tasks_server_conformance
# The Tasks extension served by FastMCP's own engine (fastmcp-tasks 4.1.4,
# $MCP_FASTMCP_TASKS_PYTHON, tests/fixtures/fastmcp_tasks_server.py) over
# stdio and HTTP: a task followed through its status messages to its
# result, one asking for input (input_required) answered through the
# elicitation handler and tasks/update, a required task tool cancelled and
# refused without the extension, and `mcp call --task` showing the task's
# status changes.
interop_tests fastmcp_task_server

# ---- MCP Apps: the published ext-apps example servers -----------------------
# server-basic-vanillajs 2.0.3 ($MCP_APPS_VANILLAJS_DIR) over stdio and HTTP
# (bound to 127.0.0.1 by tests/fixtures/loopback_only.js): its app tool
# marked, its ui:// resource read, checked and fingerprinted alike on both,
# both provider conversions and both call paths; `mcp apps` and `mcp
# read-app`. server-system-monitor 2.0.3 ($MCP_APPS_MONITOR_DIR): its
# app-only tool left out of the conversions, refused on the model path,
# reached on its own app's path and refused to another server's app.
interop_tests mcp_apps

# ---- mcp inspect in a browser -----------------------------------------------
# The inspector (`$MCP_CLI --config FILE inspect`, of everything, both Apps
# examples and a hostile stdio server, tests/interop/inspect/hostile_server.mjs)
# driven in Debian's Chromium ($MCP_CHROMIUM) by Node scripts on
# playwright-core ($MCP_PLAYWRIGHT_DIR), tests/interop/inspect/*.mjs: the
# token (401 without it), a tool called through its form, an elicitation
# answered in the page, both example apps rendered (their pixels counted)
# and the monitor's app-only tool polled from its app and never offered to
# a model, and a hostile app's oversized message, flood, reach for another
# server's tool, for file: and https: resources and for the top frame all
# refused, the page still working after. Screenshots of each view in
# target/inspect-screenshots/.
interop_tests inspect

# ---- corporate networks: a proxy, a private CA, client certificates --------
# tinyproxy ($MCP_TINYPROXY) started by each test on a free loopback port
# carries the mcp command to the Python server: named by HTTP_PROXY,
# http_proxy and --proxy, bypassed by NO_PROXY and --no-proxy, and tunnelling
# to an https server for HTTPS_PROXY. A CA the test makes with openssl
# ($MCP_OPENSSL): --cacert reaches a server it signed (refused without it);
# --cert/--key reach one that requires a client certificate (refused
# without one, and with another CA's).
interop_tests network

# ---- a shared response cache in Redis ---------------------------------------
# One redis-server ($MCP_REDIS_SERVER, Debian's 7.0) for this part and the
# replicas below, started here on a free loopback port without persistence
# and named by MCP_REDIS_URL; each test has a database of its own. Stopped
# after the replicas, or when this script ends early.
redis_port="$(free_port)"
start_listening redis-server "$redis_port" "$ROOT/target/interop-redis.log" 30 \
  "$MCP_REDIS_SERVER" --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no
redis_pid="$LISTENING_PID"
export MCP_REDIS_URL="redis://127.0.0.1:$redis_port"
log "redis-server on $MCP_REDIS_URL (pid $redis_pid)"
# The RedisCache's layout (a hash
# per group that expires with its entries, expired and oversized entries
# never served), two bindings standing for two replicas of a host sharing a
# public tools list until a change reaches one of them, and Redis going away
# (every list still answered, from the server: a redis-server of that test's
# own, which it stops). The records of started tasks
# there too (RedisTaskStore): shared by two stores, expiring with the task.
interop_tests redis

# ---- FastMCP 4.1.6 (run_fastmcp, defined above) -----------------------------
run_fastmcp

# ---- OAuth against a real authorization server ------------------------------
# oidc-provider 9 (tests/fixtures/oidc_provider.mjs) in front of a Python SDK
# resource server that introspects every token (tests/fixtures/py_oauth_server.py):
# discovery, dynamic registration, code + PKCE through the headless handler,
# a tool call, then a refresh when the stored access token goes bad.
interop_tests oauth
# The extensions at the same provider, given a machine client: a
# client_credentials grant with a private_key_jwt assertion and DPoP proofs,
# the provider demanding a nonce; its introspection shows the token bound to
# the DPoP key.
interop_tests oauth_extensions
# Two replicas of a host in two processes share their tokens and started
# tasks through the redis-server started above (RedisTokenStore,
# RedisTaskStore): the first authorizes at oidc-provider and starts a task
# (the 2026-07-28 Tasks extension the Python resource server also serves),
# the second (this binary run again) is served without authorizing, finds
# the task in Redis and polls it to its result; the token store's expiry
# follows the tokens' lifetime. By name: the module's third test is the
# second replica, which the first runs and which is ignored on its own.
interop_tests replicas two_processes_share_one_authorization_through_redis
interop_tests replicas the_token_store_expires_with_the_tokens_and_keeps_origins_apart
# The Redis stores under faults (issue 43, item 18): a redis-server of each
# fault test's own ($MCP_REDIS_SERVER, loopback, stopped at its end)
# restarted mid-run, paused by DEBUG SLEEP and CLIENT PAUSE, and full
# (maxmemory 1mb, noeviction); the shared one above holding records of a
# newer version and garbage under our keys, and tokens sealed at rest; and
# two processes refreshing the same tokens at once against a tiny
# authorization server that revokes a reused refresh token (exactly one
# refresh). By name: refresh_replica is the second process, ignored alone.
for test in a_restarted_server_fails_calls_in_time_and_serves_again \
  a_paused_server_never_holds_a_call_past_its_bound \
  a_full_server_fails_writes_classified_and_keeps_serving_reads \
  records_of_a_newer_version_or_garbage_are_misses_that_quote_nothing \
  tokens_sealed_at_rest_open_only_with_their_key_under_their_name \
  two_processes_refreshing_at_once_refresh_once; do
  interop_tests redis_faults "$test"
done
trap - EXIT
stop_server "$redis_pid"

# ---- the conformance suite --------------------------------------------------
# examples/conformance.rs is the client under test. A suite run exits non-zero
# on a failed scenario and on a scenario its expected-failures file lists that
# now passes (a stale baseline); every baseline file is empty today.
log "cargo build --example conformance (the conformance client)"
cargo build --example conformance
CONFORMANCE_CLIENT="$ROOT/target/debug/examples/conformance"
[ -x "$CONFORMANCE_CLIENT" ] || die "the conformance client was not built at $CONFORMANCE_CLIENT"

# conformance_suite NAME OUT ARGS...: one suite run into OUT (emptied first);
# prints the per-scenario summary and totals, fails on a non-zero exit or on
# any failed check.
conformance_suite() {
  local name="$1" out="$2"; shift 2
  rm -rf "$out"
  mkdir -p "$out"
  log "conformance suite: $name (results in $out)"
  local rc=0
  "$MCP_NODE" "$MCP_CONFORMANCE_JS" client --command "$CONFORMANCE_CLIENT" "$@" -o "$out" \
    > "$out/run.log" 2>&1 || rc=$?
  sed -n '/=== SUITE SUMMARY ===/,$p' "$out/run.log"
  [ "$rc" -eq 0 ] || { tail -n 60 "$out/run.log" >&2; die "conformance suite $name failed (exit $rc)"; }
  grep -q '^Total: [0-9]* passed, 0 failed' "$out/run.log" || die "conformance suite $name reported failed checks"
}

# conformance_scenario SCENARIO OUT LOG ARGS...: one scenario run (for those
# in no suite, or forced at another revision); fails unless it exits 0 and
# says OVERALL: PASSED.
conformance_scenario() {
  local scenario="$1" out="$2" log_file="$3"; shift 3
  log "conformance scenario $scenario ($*)"
  local rc=0
  "$MCP_NODE" "$MCP_CONFORMANCE_JS" client --command "$CONFORMANCE_CLIENT" \
    --scenario "$scenario" "$@" -o "$out" > "$log_file" 2>&1 || rc=$?
  sed -n '/Test Results:/,$p' "$log_file"
  [ "$rc" -eq 0 ] || { tail -n 60 "$log_file" >&2; die "conformance scenario $scenario ($*) failed (exit $rc)"; }
  grep -q "OVERALL: PASSED" "$log_file" || die "conformance scenario $scenario ($*) did not pass"
}

# Every client scenario of 2025-11-25, and of 2026-07-28 (the harness pins the
# client's era through MCP_CONFORMANCE_PROTOCOL_VERSION).
conformance_suite "--suite all --spec-version 2025-11-25" "$ROOT/target/conformance/2025-11-25" \
  --suite all --spec-version 2025-11-25 --expected-failures "$ROOT/conformance-baseline.yml"
conformance_suite "--suite all --spec-version 2026-07-28" "$ROOT/target/conformance/2026-07-28" \
  --suite all --spec-version 2026-07-28 --expected-failures "$ROOT/conformance-baseline-2026-07-28.yml"

# The authorization extensions (client_credentials with private_key_jwt and
# client_secret_basic, enterprise-managed authorization, DPoP with and
# without server nonces, workload identity federation). No expected-failures
# file: every scenario must pass.
EXT_OUT="$ROOT/target/conformance/extensions"
conformance_suite "--suite extensions" "$EXT_OUT" --suite extensions
# The suite runs the extensions at 2025-11-25 only (they are not on the spec
# timeline); the same six, forced at 2026-07-28, show they hold on the
# stateless era too.
for scenario in auth/client-credentials-jwt auth/client-credentials-basic auth/enterprise-managed-authorization \
  auth/dpop auth/dpop-nonce auth/wif-jwt-bearer; do
  conformance_scenario "$scenario" "$EXT_OUT/2026-07-28" "$EXT_OUT/$(basename "$scenario")-2026-07-28.log" \
    --spec-version 2026-07-28 --force
done

# Skills (SEP-2640): the suite's four client scenarios, at its default
# revision and forced at 2026-07-28. Each must pass with no check skipped
# (a client that never calls skills/list is skipped, not passed).
SKILLS_OUT="$ROOT/target/conformance/skills"
rm -rf "$SKILLS_OUT"
mkdir -p "$SKILLS_OUT"
for scenario in sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size \
  sep-2640-client-verify-frontmatter; do
  conformance_scenario "$scenario" "$SKILLS_OUT" "$SKILLS_OUT/$scenario.log"
  conformance_scenario "$scenario" "$SKILLS_OUT/2026-07-28" "$SKILLS_OUT/$scenario-2026-07-28.log" \
    --spec-version 2026-07-28 --force
  if grep -q "SKIPPED" "$SKILLS_OUT/$scenario.log" "$SKILLS_OUT/$scenario-2026-07-28.log"; then
    die "conformance scenario $scenario skipped a check"
  fi
done

# The 2025-03-26 authorization back-compat: servers of that revision have no
# Protected Resource Metadata, so the client reads the authorization server
# metadata at the server's root, or falls back to /authorize, /token and
# /register there.
BACKCOMPAT_OUT="$ROOT/target/conformance/2025-03-26"
rm -rf "$BACKCOMPAT_OUT"
mkdir -p "$BACKCOMPAT_OUT"
for scenario in auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback; do
  conformance_scenario "$scenario" "$BACKCOMPAT_OUT" "$BACKCOMPAT_OUT/$(basename "$scenario").log" \
    --spec-version 2025-03-26
done

log "interop OK"
