#!/bin/bash -eu
# Builds graphvet's fuzz targets the way OSS-Fuzz / ClusterFuzzLite expect:
# compiler and flags from $CC/$CXX/$CFLAGS/$CXXFLAGS, the engine from
# $LIB_FUZZING_ENGINE, and into $OUT, next to each binary:
#   <target>_seed_corpus.zip  every .graph under corpus/ and fuzz/seeds/
#   <target>.dict             the target's libFuzzer dictionary
#   <target>.options          its [libfuzzer] options (dict, max_len, timeout)
# Runs from the source tree (the engine's WORKDIR) or, when the current
# directory is not graphvet, from $SRC/graphvet. Build files go to $WORK.

src_dir=$(pwd)
if [[ ! -f "$src_dir/fuzz/CMakeLists.txt" ]]; then
  src_dir="$SRC/graphvet"
fi
build_dir="${WORK:-/tmp}/graphvet-build"
jobs="${GRAPHVET_BUILD_JOBS:-$(nproc)}"

# The distribution's fmt and z3 are built against libstdc++: link the same
# standard library (OSS-Fuzz adds -stdlib=libc++ by default).
CXXFLAGS="${CXXFLAGS//-stdlib=libc++/}"

targets=(graph_parse_fuzzer tensor_move_delete_fuzzer midend_fuzzer)

# No build type: the engine's flags ($CFLAGS: -O1, debug line tables, the
# sanitizer) are the only optimization and instrumentation settings.
cmake -S "$src_dir" -B "$build_dir" -G Ninja --no-warn-unused-cli \
  -DCMAKE_BUILD_TYPE= \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DGRAPHVET_LIBFUZZER=ON -DGRAPHVET_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DGRAPHVET_TESTS=OFF -DGRAPHVET_BENCH=OFF -DGRAPHVET_TOOLS=OFF
cmake --build "$build_dir" --target "${targets[@]}" -j "$jobs"

# One seed zip serves every target: the parser fuzzer starts from the same
# valid graphs the pass fuzzer mutates.
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
find "$src_dir/corpus" "$src_dir/fuzz/seeds" -name '*.graph' -type f 2>/dev/null | sort |
  while read -r f; do
    # Flatten paths (corpus/regressions/x.graph -> regressions_x.graph) so
    # equal base names in different folders do not collide.
    rel="${f#"$src_dir"/}"
    cp "$f" "$seeds/$(echo "$rel" | tr '/' '_')"
  done

for t in "${targets[@]}"; do
  cp "$build_dir/fuzz/$t" "$OUT/$t"
  cp "$src_dir/fuzz/$t.dict" "$OUT/$t.dict"
  cp "$src_dir/fuzz/$t.options" "$OUT/$t.options"
  rm -f "$OUT/${t}_seed_corpus.zip"
  if [[ -n "$(ls -A "$seeds")" ]]; then
    (cd "$seeds" && zip -q -j "$OUT/${t}_seed_corpus.zip" ./*.graph)
  fi
done
