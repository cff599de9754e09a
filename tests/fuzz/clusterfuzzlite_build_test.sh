#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh with the environment an OSS-Fuzz /
# ClusterFuzzLite builder sets (clang, ASan + libFuzzer flags, $OUT, $SRC,
# $WORK; no container) and checks what lands in $OUT: an executable per
# target, its .dict and .options, and a seed zip of .graph files; then runs
# each binary on its unpacked seed corpus for a few hundred executions.
# Usage: clusterfuzzlite_build_test.sh SOURCE_DIR WORK_DIR
#
# The first run is a full clang + ASan build of the IR, passes and oracle
# (about 250 s of CPU; later runs reuse WORK_DIR and are incremental). Set
# GRAPHVET_SKIP_FUZZ_BUILD_TEST=1 to skip it (reported as skipped, exit 77).
#
# A pass bug the fuzzer finds on its seeds is not a build defect: the target's
# own "refinement violation" abort is accepted here (fuzz.replay.* reports
# it); sanitizer errors and any other crash fail the test.
set -euo pipefail
if [[ "${GRAPHVET_SKIP_FUZZ_BUILD_TEST:-0}" == 1 ]]; then
  echo "skipped: GRAPHVET_SKIP_FUZZ_BUILD_TEST=1"
  exit 77
fi
src=$(cd "$1" && pwd)
work=$2
mkdir -p "$work"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export CC=clang-14 CXX=clang++-14
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS -stdlib=libc++" # build.sh must drop -stdlib=libc++
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export OUT="$tmp/out" SRC="$tmp/src" WORK="$work"
export GRAPHVET_BUILD_JOBS="${GRAPHVET_BUILD_JOBS:-2}"
mkdir -p "$OUT" "$SRC"

fail() { echo "FAIL: $*" >&2; exit 1; }

start=$SECONDS
(cd "$src" && bash .clusterfuzzlite/build.sh) >"$tmp/build.log" 2>&1 ||
  { tail -n 40 "$tmp/build.log" >&2; fail "build.sh failed"; }
echo "build.sh took $((SECONDS - start))s"
# The engine's image installs no RapidCheck: the fuzz build must not need the
# property harness (props/) or the graphvet command built on it.
! grep -q 'graphvet_props' "$work/graphvet-build/build.ninja" ||
  fail "the fuzz build configures props/ (RapidCheck), which the engine's image lacks"

expected_seeds=$(find "$src/corpus" "$src/fuzz/seeds" -name '*.graph' -type f 2>/dev/null | wc -l)
((expected_seeds > 0)) || fail "no seed graphs under corpus/ or fuzz/seeds/"

for t in graph_parse_fuzzer tensor_move_delete_fuzzer midend_fuzzer; do
  [[ -x "$OUT/$t" ]] || fail "$OUT/$t missing or not executable"
  [[ -s "$OUT/$t.dict" ]] || fail "$OUT/$t.dict missing or empty"
  grep -q '^\[libfuzzer\]' "$OUT/$t.options" || fail "$OUT/$t.options has no [libfuzzer] section"
  grep -Eq "^dict *= *$t\.dict" "$OUT/$t.options" || fail "$OUT/$t.options does not name $t.dict"
  zip="$OUT/${t}_seed_corpus.zip"
  [[ -s "$zip" ]] || fail "$zip missing or empty"
  in_zip=$(unzip -Z1 "$zip" | grep -c '\.graph$' || true)
  ((in_zip == expected_seeds)) || fail "$zip holds $in_zip .graph files, expected $expected_seeds"

  corpus="$tmp/corpus-$t"
  mkdir -p "$corpus" && unzip -q "$zip" -d "$corpus"
  # The binary must accept its own dictionary and options and survive its
  # seeds plus a few hundred mutations.
  max_len=$(sed -n 's/^max_len *= *//p' "$OUT/$t.options")
  log="$tmp/run-$t.log"
  status=0
  (cd "$OUT" && "./$t" -runs=300 -seed=1 -dict="$t.dict" -max_len="$max_len" \
    -artifact_prefix="$tmp/" "$corpus") >"$log" 2>&1 || status=$?
  grep -q "Dictionary: [1-9][0-9]* entries" "$log" || fail "$t did not load its dictionary"
  if grep -q "Done 300 runs" "$log"; then
    ran="300 runs"
  elif grep -Eq "^$t: (refinement violation|the pass pipeline broke the graph)" "$log" &&
      ! grep -Eq "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$log"; then
    ran="stopped at a pass finding (see fuzz.replay.$t): $(grep -m1 -A1 '^verdict:' "$log" | tail -n1)"
  else
    tail -n 40 "$log" >&2
    fail "$t crashed (status $status) or did not finish 300 runs"
  fi
  echo "ok $t: $(stat -c %s "$OUT/$t") bytes, $in_zip seeds, $ran"
done
echo "total $((SECONDS - start))s"
