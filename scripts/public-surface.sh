#!/usr/bin/env bash
# Counts the crate's public module-level items: what rustdoc's JSON lists in
# `paths` for this crate as public, leaving out impls, fields, variants and
# re-exports (a `pub use` adds a path, not an item). Needs a nightly
# toolchain for `--output-format json`.
#
#   scripts/public-surface.sh          # the total
#   scripts/public-surface.sh --kinds  # the total per kind
#   scripts/public-surface.sh --list   # every item's path
#   scripts/public-surface.sh --twins  # type names defined more than once
#                                      # (tower's per-layer ResponseFuture
#                                      # is the one expected)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
cargo +nightly rustdoc --quiet --lib --all-features -- -Z unstable-options --output-format json
json="$target/doc/mcp_stack.json"
# An item is counted when it is in this crate (crate_id 0), listed in `paths`
# (reachable by a public path), is of a module-level kind, and is public in
# `index` (so `pub(crate)` items that rustdoc still lists do not count).
filter='
  . as $doc
  | [ .paths | to_entries[]
      | select(.value.crate_id == 0)
      | select(.value.kind as $k | ["impl","struct_field","variant","use","assoc_type","assoc_const","primitive"] | index($k) | not)
      | select(($doc.index[.key].visibility // "public") == "public")
      | {kind: .value.kind, path: (.value.path | join("::"))} ]'
case "${1:-}" in
  --kinds) jq -r "$filter | group_by(.kind) | map(\"\(length)\t\(.[0].kind)\") | .[]" "$json"; jq -r "$filter | length | \"\(.)\ttotal\"" "$json" ;;
  --list) jq -r "$filter | sort_by(.path) | .[] | \"\(.kind)\t\(.path)\"" "$json" ;;
  --twins) jq -r "$filter | map(select(.kind as \$k | [\"struct\",\"enum\",\"trait\",\"type_alias\"] | index(\$k))) | group_by(.path | split(\"::\") | last) | map(select(length > 1)) | .[] | map(.path) | join(\"  \")" "$json" ;;
  *) jq -r "$filter | length" "$json" ;;
esac
