#!/usr/bin/env bash
# Contract test of ci/fuzz-libfuzzer-report, the step of ci/fuzz-libfuzzer
# that reduces, dedupes and summarizes findings. Needs no clang and no fuzz
# build: it plants finding files and fuzz.log files (lines as libFuzzer 14
# prints them) in a scratch artifacts directory and checks the listing, the
# <finding>.reduced.graph files, the summary lines and the exit status.
# Usage: libfuzzer_report_test.sh SOURCE_DIR [GRAPHVET]
#
# The reduce/dedupe/known logic runs against a stub graphvet (a few lines of
# bash below) so that its expectations do not depend on which pass bugs are
# open. With GRAPHVET (the real binary), a second part checks the paths that
# do not depend on them either: a sound graph planted as a crash is "not
# reproduced", and one byte-identical to a corpus graph is known. The planted
# pass finding (libfuzzer_report/unsound-ref-var-src.graph, found by the
# fuzzer and reduced to 4 nodes) is checked as reduced while `graphvet check`
# still calls it a violation, and as not reproduced once the pass is fixed;
# midend_fuzzer's open cse finding (fuzz/crashes-found/) is reduced with the
# pipeline its `# passes:` line names while it is open.
set -euo pipefail
src=$(cd "$1" && pwd)
graphvet=${2-}
[[ -z "$graphvet" ]] || graphvet=$(realpath "$graphvet")
report="$src/ci/fuzz-libfuzzer-report"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmd=tensor_move_delete_fuzzer
gpf=graph_parse_fuzzer
mid=midend_fuzzer

fail() { echo "FAIL: $*" >&2; [[ -f "$tmp/out" ]] && sed 's/^/  | /' "$tmp/out" >&2; exit 1; }
expect_line() { grep -qF -- "$1" "$tmp/out" || fail "no line with: $1"; }
# Runs the report; its output goes to $tmp/out, its exit status to $status.
run_report() { status=0; "$report" "$@" >"$tmp/out" 2>&1 || status=$?; }

# --- stub graphvet -----------------------------------------------------------
# reduce FILE -o OUT ...: a file with a "# stub-violation" line "fails"; its
# reduced graph is its lines minus comments, blank lines and lines holding
# "pad", under the real command's header; any other file has nothing to reduce
# (exit 2). opt FILE -O 0: the file minus comments and blank lines.
stub="$tmp/graphvet-stub"
cat >"$stub" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
cmd=$1 file=$2
body() { grep -v -e '^#' -e '^[[:space:]]*$' "$file" || true; }
case "$cmd" in
  opt) body ;;
  reduce)
    [[ $3 == -o ]] || exit 2
    out=$4
    if ! grep -q '^# stub-violation' "$file"; then
      echo "$file: error: nothing to reduce: the pipeline's result is sound, not a violation" >&2
      exit 2
    fi
    reduced=$(body | grep -v pad)
    stop=fixpoint
    grep -q '^# stub-budget' "$file" && stop="budget exhausted"
    {
      echo "# graphvet reduce $file: race violation kept; $(body | grep -c ' = ') ->" \
        "$(grep -c ' = ' <<<"$reduced") nodes (3 edits in 9 evaluations, $stop)"
      echo "# replay: graphvet check $out --seed 1"
      echo
      echo "$reduced"
    } >"$out"
    ;;
  *) exit 2 ;;
esac
EOF
chmod +x "$stub"

art="$tmp/art"
corpus="$tmp/corpus"
fuzzers="$tmp/bin"
mkdir -p "$art/$tmd" "$art/$gpf" "$corpus/$tmd"
touch "$corpus/$tmd/"{a,b,c}

graph_a='graph root {
  x = Data() {index = 0}
  tm = TensorMove(x)
  out = NetOutput(tm)
}'
t="$art/$tmd"
printf '# stub-violation\n%s\n  pad1 = ReLU(x)\n' "$graph_a" >"$t/crash-01"
# Same reduced graph as crash-01 (other padding): known, a duplicate.
printf '# stub-violation\n%s\n  pad2 = Mul(x, x)\n  pad3 = ReLU(x)\n' "$graph_a" >"$t/crash-02"
# Reduces to corpus/scenario1-direct.graph as graphvet prints it: known.
{ echo '# stub-violation'; echo '# stub-budget'; cat "$src/corpus/scenario1-direct.graph"; echo '  pad = ReLU(x)'; } >"$t/crash-03"
# No violation: not reproduced, raw file kept.
printf 'graph root {\n  y = Data() {index = 0}\n  out = NetOutput(y)\n}\n' >"$t/crash-04"
# Leaks, timeouts and OOMs are never reduced (leak-05 would reduce as a
# crash); timeout-06 repeats crash-04's bytes.
{ cat "$t/crash-01"; echo '# leaked'; } >"$t/leak-05"
cp "$t/crash-04" "$t/timeout-06"
# Left over from an earlier report on this directory: not findings.
echo stale >"$t/crash-01.reduced.graph"
echo log >"$t/crash-01.reduce.log"
cat >"$t/fuzz.log" <<'EOF'
INFO: -fork=1: fuzzing in separate process(s)
INFO: -fork=1: 83 seed inputs, starting to fuzz in /tmp/libFuzzerTemp.FuzzWithFork20451.dir
#119: cov: 34744 ft: 34744 corp: 83 exec/s 59 oom/timeout/crash: 0/0/0 time: 3s job: 1 dft_time: 0
#1368: cov: 47312 ft: 58970 corp: 872 exec/s 0 oom/timeout/crash: 0/0/5 time: 58s job: 10 dft_time: 0
#1615: cov: 47312 ft: 59002 corp: 879 exec/s 35 oom/timeout/crash: 0/0/6 time: 66s job: 11 dft_time: 0
INFO: fuzzed for 69 seconds, wrapping up soon
INFO: exiting: 77 time: 69s
EOF
# graph_parse_fuzzer: a copy of one of its regression inputs (known) and a new
# one; its log is a run without -fork.
cp "$src/fuzz/regressions/$gpf/nul_byte.graph" "$art/$gpf/crash-07"
printf 'graph {{{\n' >"$art/$gpf/oom-08"
cat >"$art/$gpf/fuzz.log" <<'EOF'
#4096	pulse  cov: 100 ft: 200 corp: 10/1Kb exec/s: 2048 rss: 50Mb
Done 5000 runs in 10 second(s)
EOF

# midend_fuzzer: reduced with the pipeline the first line names; a finding
# without that line is not reduced. crash-10 reduces to crash-09's graph.
m="$art/$mid"
mkdir -p "$m"
printf '# passes: cse\n# stub-violation\n%s\n' "$graph_a" >"$m/crash-09"
printf '# passes: -O2\n# stub-violation\n%s\n  pad4 = ReLU(x)\n' "$graph_a" >"$m/crash-10"
printf '# stub-violation\n%s\n' "$graph_a" >"$m/crash-11"

run_report --artifacts "$art" --corpus "$corpus" --graphvet "$stub" --fuzzer-dir "$fuzzers"
((status == 1)) || fail "exit status $status with findings, expected 1"
[[ "$(tail -n3 "$tmp/out")" == "$gpf: 5000 execs, 500 exec/s, corpus 0 inputs, new findings 1, known findings 1
$tmd: 1615 execs, 35 exec/s, corpus 3 inputs, new findings 3, known findings 3
$mid: 0 execs, 0 exec/s, corpus 0 inputs, new findings 2, known findings 1" ]] ||
  fail "summary lines: $(tail -n3 "$tmp/out")"
expect_line "ci/fuzz-libfuzzer: 11 finding(s):"
expect_line "  new   crash-09 (7 lines) -> crash-09.reduced.graph: 3 nodes, 8 lines, race violation"
expect_line "        replay: $stub check $m/crash-09.reduced.graph --passes cse"
expect_line "  known crash-10 (8 lines) -> crash-10.reduced.graph: 3 nodes, 8 lines, race violation; same graph as crash-09.reduced.graph"
expect_line "        replay: $stub check $m/crash-10.reduced.graph -O 2"
expect_line "  new   crash-11 (6 lines): no '# passes:' line to reduce with; replay with: $fuzzers/$mid $m/crash-11"
expect_line "  new   crash-01 (7 lines) -> crash-01.reduced.graph: 3 nodes, 8 lines, race violation"
expect_line "        replay: $stub check $t/crash-01.reduced.graph --passes tensor-move-delete --states 4"
expect_line "  known crash-02 (8 lines) -> crash-02.reduced.graph: 3 nodes, 8 lines, race violation; same graph as crash-01.reduced.graph"
expect_line "  known crash-03 (12 lines) -> crash-03.reduced.graph: 5 nodes, 10 lines, race violation (reduction stopped early); already in corpus/scenario1-direct.graph"
expect_line "  new   crash-04 (4 lines): not reproduced by graphvet check; replay with: $fuzzers/$tmd $t/crash-04"
expect_line "  new   leak-05 (8 lines): not reproduced by graphvet check; replay with: $fuzzers/$tmd $t/leak-05"
expect_line "  known timeout-06 (4 lines): not reproduced by graphvet check; replay with: $fuzzers/$tmd $t/timeout-06; same bytes as crash-04"
expect_line "  known crash-07 (4 lines): replay with: $fuzzers/$gpf $art/$gpf/crash-07; already in fuzz/regressions/$gpf/nul_byte.graph"
expect_line "  new   oom-08 (1 lines): replay with: $fuzzers/$gpf $art/$gpf/oom-08"
[[ "$(tail -n +4 "$t/crash-01.reduced.graph")" == "$graph_a" ]] || fail "crash-01.reduced.graph is not the reduced graph"
for f in crash-04 leak-05 timeout-06; do
  [[ ! -e "$t/$f.reduced.graph" ]] || fail "$f has a reduced graph, but graphvet does not reproduce it"
done
[[ ! -e "$art/$gpf/crash-07.reduced.graph" ]] || fail "graph_parse_fuzzer findings are not reduced"

# --target restricts the report, and its summary, to that target.
run_report --artifacts "$art" --corpus "$corpus" --graphvet "$stub" --fuzzer-dir "$fuzzers" --target "$gpf"
((status == 1)) || fail "exit status $status with --target $gpf, expected 1"
[[ "$(tail -n1 "$tmp/out")" == "$gpf: 5000 execs, 500 exec/s, corpus 0 inputs, new findings 1, known findings 1" ]] ||
  fail "--target $gpf summary"
(($(grep -c 'execs,' "$tmp/out") == 1)) || fail "--target $gpf printed another target's summary"

# Findings of tensor_move_delete_fuzzer need graphvet.
run_report --artifacts "$art" --graphvet "$tmp/missing/graphvet"
((status == 2)) || fail "exit status $status without graphvet, expected 2"
expect_line "graphvet not found"

# No findings: exit 0, zero counts; an empty log counts zero executions.
mkdir -p "$tmp/empty/$tmd" && : >"$tmp/empty/$tmd/fuzz.log"
run_report --artifacts "$tmp/empty" --corpus "$corpus" --graphvet "$tmp/missing/graphvet"
((status == 0)) || fail "exit status $status without findings, expected 0"
[[ "$(cat "$tmp/out")" == "ci/fuzz-libfuzzer: no findings
$gpf: 0 execs, 0 exec/s, corpus 0 inputs, new findings 0, known findings 0
$tmd: 0 execs, 0 exec/s, corpus 3 inputs, new findings 0, known findings 0
$mid: 0 execs, 0 exec/s, corpus 0 inputs, new findings 0, known findings 0" ]] || fail "output without findings"

# Bad usage: exit 2, for the report and for the campaign (before any build).
run_report --target nonesuch
((status == 2)) || fail "--target nonesuch: exit status $status, expected 2"
run_report --reduce-time 0
((status == 2)) || fail "--reduce-time 0: exit status $status, expected 2"
status=0
"$src/ci/fuzz-libfuzzer" --reduce-time x >"$tmp/out" 2>&1 || status=$?
((status == 2)) || fail "ci/fuzz-libfuzzer --reduce-time x: exit status $status, expected 2"
status=0
"$src/ci/fuzz-libfuzzer" --help >"$tmp/out" 2>&1 || status=$?
((status == 2)) || fail "ci/fuzz-libfuzzer --help: exit status $status, expected 2"
expect_line "--graphvet PATH"
expect_line "--reduce-time SEC"
echo "ok: stub graphvet"

# --- the real graphvet -------------------------------------------------------
if [[ -z "$graphvet" ]]; then
  echo "ok (no graphvet given: real-binary part skipped)"
  exit 0
fi
art="$tmp/art-real"
t="$art/$tmd"
mkdir -p "$t"
cp "$src/corpus/scenario1-direct.graph" "$t/crash-11"
{ cat "$src/corpus/scenario1-direct.graph"; echo "# planted"; } >"$t/crash-12"
planted="$src/tests/fuzz/libfuzzer_report/unsound-ref-var-src.graph"
cp "$planted" "$t/crash-13"
run_report --artifacts "$art" --corpus "$corpus" --graphvet "$graphvet" --fuzzer-dir "$fuzzers" --target "$tmd"
((status == 1)) || fail "real graphvet: exit status $status, expected 1"
expect_line "  known crash-11 (9 lines): not reproduced by graphvet check; replay with: $fuzzers/$tmd $t/crash-11; already in corpus/scenario1-direct.graph"
expect_line "  new   crash-12 (10 lines): not reproduced by graphvet check; replay with: $fuzzers/$tmd $t/crash-12"
check=0
"$graphvet" check "$planted" --passes tensor-move-delete --states 4 >/dev/null 2>&1 || check=$?
if ((check == 1)); then
  grep -Eq "^  (new   |known )crash-13 \([0-9]+ lines\) -> crash-13\.reduced\.graph: [0-9]+ nodes, [0-9]+ lines, [a-z-]+ violation" "$tmp/out" ||
    fail "real graphvet: crash-13 (a violation) not listed as reduced"
  expect_line "        replay: $graphvet check $t/crash-13.reduced.graph --passes tensor-move-delete --states 4"
  check=0
  "$graphvet" check "$t/crash-13.reduced.graph" --passes tensor-move-delete --states 4 >/dev/null 2>&1 ||
    check=$?
  ((check == 1)) || fail "real graphvet: graphvet check on crash-13.reduced.graph exits $check, expected 1"
  echo "ok: real graphvet (the planted violation is reduced)"
else
  expect_line "crash-13 ($(wc -l <"$planted") lines): not reproduced by graphvet check"
  echo "ok: real graphvet (the planted violation is fixed: graphvet check exits $check; listed as not reproduced)"
fi

# midend_fuzzer with the real graphvet: the open cse finding of
# fuzz/crashes-found/ (while it is open) is reduced with the pipeline its
# first line names and known by its graph.
mfinding="$src/fuzz/crashes-found/midend-cse-const-graph-output.graph"
check=0
[[ -f "$mfinding" ]] && { "$graphvet" check "$mfinding" --passes cse >/dev/null 2>&1 || check=$?; }
if ((check == 1)); then
  m="$art/$mid"
  mkdir -p "$m"
  cp "$mfinding" "$m/crash-14"
  run_report --artifacts "$art" --corpus "$corpus" --graphvet "$graphvet" --fuzzer-dir "$fuzzers" --target "$mid"
  ((status == 1)) || fail "real graphvet, $mid: exit status $status, expected 1"
  grep -Eq "^  known crash-14 \([0-9]+ lines\) -> crash-14\.reduced\.graph: [0-9]+ nodes, [0-9]+ lines, [a-z-]+ violation; already in fuzz/crashes-found/midend-cse-const-graph-output\.graph" "$tmp/out" ||
    fail "real graphvet: $mid crash-14 not reduced and known"
  expect_line "        replay: $graphvet check $m/crash-14.reduced.graph --passes cse"
  echo "ok: real graphvet ($mid finding reduced with its pipeline)"
fi
