#!/usr/bin/env bash
# Builds the bench (release) and runs it pinned to one CPU (the last one),
# so that the bench and every server it starts share it: see src/main.rs
# (stdio) and src/http/mod.rs (HTTP), which say what each setup can show.
#   bench/vs-rmcp/run.sh [--unpinned] [--transport stdio|http] [--json] [--rounds N] [--calls N]
#                        [--large-calls N] [--connects N] [--catalogs N] [--huge-calls N]
# --unpinned (first): every CPU allowed. CARGO_TARGET_DIR is honoured.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
TARGET="${CARGO_TARGET_DIR:-$HERE/target}"
PIN=1
if [ "${1:-}" = "--unpinned" ]; then
  PIN=0
  shift
fi
cargo build --release --quiet --manifest-path "$HERE/Cargo.toml" --target-dir "$TARGET"
if [ "$PIN" = 1 ]; then
  CPU="$(($(nproc) - 1))"
  exec taskset -c "$CPU" "$TARGET/release/vs-rmcp" "$@"
fi
exec "$TARGET/release/vs-rmcp" "$@"
