#!/usr/bin/env bash
# Network-namespace fault tests (issue 13, item 10): a client and an HTTP MCP
# server in two network namespaces of their own, joined by a veth pair with
# a private /30; a partition is the client's end of the link set down, then
# up (this kernel has no netem; latency, caps, resets and silence are the TCP
# proxy of tests/http/netfaults.rs, run by plain `cargo test`). The tests
# run here are tests/http/netns.rs: the `netns::` tests of the `http` test
# binary, ignored by plain `cargo test`.
#
# Needs root. Installs iproute2 with apt-get when `ip` is missing. Fails
# loudly, never skips. Everything it makes is removed on exit.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

die() { printf 'netfaults: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
if ! command -v ip >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null \
    || die "cannot install iproute2"
fi
ip netns list >/dev/null || die "ip netns does not work here"

# Build first, outside the namespaces.
cargo build --example soak
TEST_EXE="$(cargo test --test http --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "http":
        print(m["executable"])')"
[ -x "$TEST_EXE" ] || die "cannot find the http test executable"
# The namespace tests are the ignored tests of its netns module: a filter
# that matched none would pass with nothing run, so they are counted.
FILTER="netns::"
COUNT="$("$TEST_EXE" --list --ignored "$FILTER" | grep -c ': test$' || true)"
[ "$COUNT" -gt 0 ] || die "no ignored test matches $FILTER in $TEST_EXE"
SERVER_EXE="$ROOT/target/debug/examples/soak"
[ -x "$SERVER_EXE" ] || die "cannot find $SERVER_EXE"

# Names unique to this run; a /30 of 10.203.0.0/16 chosen from the pid.
ID=$$
NS_CLIENT="mcpnf-c-$ID"
NS_SERVER="mcpnf-s-$ID"
VETH_CLIENT="nfc$ID"
VETH_SERVER="nfs$ID"
NET="10.203.$(( ID % 250 )).$(( (ID / 250 % 64) * 4 ))"
BASE="${NET%.*}"
LAST="${NET##*.}"
ADDR_CLIENT="$BASE.$(( LAST + 1 ))"
ADDR_SERVER="$BASE.$(( LAST + 2 ))"
PORT=8080

RUN_LOG="$(mktemp)"
cleanup() {
  rm -f "$RUN_LOG"
  # Whatever still runs in our namespaces (a server a failed test left).
  for pid in $(ip netns pids "$NS_SERVER" 2>/dev/null) $(ip netns pids "$NS_CLIENT" 2>/dev/null); do
    kill -9 "$pid" 2>/dev/null || true
  done
  ip netns del "$NS_CLIENT" 2>/dev/null || true
  ip netns del "$NS_SERVER" 2>/dev/null || true
}
trap cleanup EXIT

ip netns add "$NS_CLIENT"
ip netns add "$NS_SERVER"
ip link add "$VETH_CLIENT" netns "$NS_CLIENT" type veth peer name "$VETH_SERVER" netns "$NS_SERVER"
ip -n "$NS_CLIENT" addr add "$ADDR_CLIENT/30" dev "$VETH_CLIENT"
ip -n "$NS_SERVER" addr add "$ADDR_SERVER/30" dev "$VETH_SERVER"
for ns in "$NS_CLIENT" "$NS_SERVER"; do ip -n "$ns" link set lo up; done
ip -n "$NS_CLIENT" link set "$VETH_CLIENT" up
ip -n "$NS_SERVER" link set "$VETH_SERVER" up
printf 'netfaults: client %s (%s) <-> server %s (%s:%s)\n' \
  "$NS_CLIENT" "$ADDR_CLIENT" "$NS_SERVER" "$ADDR_SERVER" "$PORT"

# The test starts (and restarts) the server in its namespace itself.
RUST_LOG=${RUST_LOG:-} NETFAULTS_URL="http://$ADDR_SERVER:$PORT/mcp" NETFAULTS_IFACE="$VETH_CLIENT" \
NETFAULTS_SERVER_NS="$NS_SERVER" NETFAULTS_SERVER_EXE="$SERVER_EXE" NETFAULTS_SERVER_ADDR="$ADDR_SERVER:$PORT" \
  timeout 180 ip netns exec "$NS_CLIENT" "$TEST_EXE" --ignored --test-threads=1 --nocapture "$FILTER" \
  | tee "$RUN_LOG" || die "the namespace tests failed"
grep -q "^test result: ok. $COUNT passed" "$RUN_LOG" || die "expected $COUNT namespace tests to pass"
printf 'netfaults: the %s namespace tests passed\n' "$COUNT"
