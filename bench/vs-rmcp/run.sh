#!/usr/bin/env bash
# Builds the bench (release) and runs it pinned to one CPU (the last one),
# so that the bench and every server it starts share it: see src/main.rs.
#   bench/vs-rmcp/run.sh [--rounds N] [--calls N] [--large-calls N] [--connects N] [--catalogs N]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cargo build --release --quiet --manifest-path "$HERE/Cargo.toml"
CPU="$(($(nproc) - 1))"
exec taskset -c "$CPU" "$HERE/target/release/vs-rmcp" "$@"
