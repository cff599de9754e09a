#!/bin/sh
# Soundness of every `# -----` chunk of a test file: `graphvet check` has no
# --split-input-file, so the chunks are written to files of their own and each
# is checked with the remaining arguments (e.g. --passes fold-constant).
# Usage: check-chunks.sh GRAPHVET FILE TMPDIR CHECK-ARGS...
# Prints one verdict line per chunk; exits 1 when any chunk is not sound.
graphvet=$1; file=$2; dir=$3; shift 3
rm -rf "$dir" && mkdir -p "$dir" || exit 2
awk -v d="$dir" 'BEGIN { n = 0 } /^# -----/ { n++; next } { print > (d "/chunk" n ".graph") }' "$file" || exit 2
status=0
for chunk in "$dir"/chunk*.graph; do
  if out=$("$graphvet" check "$chunk" "$@" 2>&1); then
    echo "$(basename "$chunk"): sound"
  else
    echo "$(basename "$chunk"): NOT SOUND"
    echo "$out"
    status=1
  fi
done
exit $status
