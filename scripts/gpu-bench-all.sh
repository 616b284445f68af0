#!/usr/bin/env bash
# Runs the benchmark suite on a GPU machine and gathers everything into $OUT:
#   1. the GEMM and elementwise kernel tests on both backends (test_gpu, filtered)
#   2. bench_compare: C1 matmul, C2 bandwidth, C3 launch, C4 elementwise, C5 MLP on
#      nv and cuda -> report.md with nv/cuda ratios and PNG charts (gnuplot, when present)
#   3. bench_matmul --sweep: every GEMM tile configuration at 4096 (tuning data)
# Output ($OUT, default ./bench-out): summary.txt (what ran, pass/fail, kernel log),
# report.md, the charts as PNG, and bench-results.tar.gz with every JSON, log,
# chart and chart script. Takes about 6-8 minutes on an H200.
#   OUT=/tmp/out scripts/gpu-bench-all.sh            # from a source tree with build/
#   BIN=dist scripts/gpu-bench-all.sh                # binaries elsewhere (bench/, tests/ under BIN)
#   QUICK=1 scripts/gpu-bench-all.sh                 # smaller sizes (about 2 minutes)
#   STEPS=compare scripts/gpu-bench-all.sh           # some of: tests,compare,sweep
set -uo pipefail
steps=",${STEPS:-tests,compare,sweep},"
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/bench-out}
mkdir -p "$out"
work="$out/results"
mkdir -p "$work"

# Where the programs are: $BIN, or build/ or dist/ next to this script or here.
bin=${BIN:-}
if [ -z "$bin" ]; then
  for c in "$PWD/build" "$here/../build" "$PWD/dist" "$here/../dist" "$here"; do
    if [ -x "$c/bench/bench_compare" ]; then bin=$c; break; fi
  done
fi
if [ -z "$bin" ] || [ ! -x "$bin/bench/bench_compare" ]; then
  echo "gpu-bench-all: no bench/bench_compare under \$BIN, ./build, ./dist or next to this script; build first (make)" >&2
  exit 2
fi
bin=$(cd "$bin" && pwd)
summary="$out/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
status=0

say "gpu-bench-all: binaries from $bin, results in $out ($(date -u +%FT%TZ))"
( nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null \
  || echo "nvidia-smi unavailable" ) | sed 's/^/gpu: /' | tee -a "$summary"
( dmesg 2>/dev/null || echo "(kernel log unreadable)" ) | tail -n 20 > "$work/dmesg-before.txt"

# 1. Kernel correctness on both backends.
if [[ $steps != *,tests,* ]]; then
  say "kernel tests: not in STEPS"
elif [ -x "$bin/tests/test_gpu" ]; then
  timeout 300 "$bin/tests/test_gpu" --gtest_filter='*GemmKernels*:*ElementwiseKernels*:*AcceleratorTest*' \
    > "$work/test_gpu_kernels.txt" 2>&1
  rc=$?
  say "kernel tests: exit $rc; $(grep -E '^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ test' "$work/test_gpu_kernels.txt" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$work/test_gpu_kernels.txt" | sort -u | head -20 | tee -a "$summary"
  [ $rc -eq 0 ] || status=1
else
  say "kernel tests: $bin/tests/test_gpu not found, skipped"
fi

# 2. The suite, one report.
if [[ $steps == *,compare,* ]]; then
  quick=()
  [ "${QUICK:-0}" = "1" ] && quick=(--quick)
  timeout 900 "$bin/bench/bench_compare" --out "$work/report" "${quick[@]}" > "$work/bench_compare.txt" 2>&1
  rc=$?
  say "bench_compare: exit $rc"
  grep -E "^\[[0-9]/[0-9]\]|bench_compare:|CHECK FAILED" "$work/bench_compare.txt" | tee -a "$summary"
  [ $rc -eq 0 ] || status=1
fi

# 3. Tile configurations at 4096 (which mma.sync / SIMT variant is fastest; the
#    wgmma kernel is already in bench_compare's matmul rows at every size).
if [[ $steps == *,sweep,* ]]; then
  sweep_args=(--sweep --no-wgmma --types f16,bf16,f32 --blocks 3)
  [ "${QUICK:-0}" = "1" ] && sweep_args=(--sweep --no-wgmma --types bf16 --blocks 2)
  timeout 300 "$bin/bench/bench_matmul" "${sweep_args[@]}" --json "$work/sweep.json" > "$work/sweep.txt" 2>&1
  rc=$?
  say "bench_matmul --sweep: exit $rc"
  grep -E "^\| (f16|bf16|f32) " "$work/sweep.txt" | tee -a "$summary"
  grep -E "CHECK FAILED" "$work/sweep.txt" | tee -a "$summary"
  [ $rc -eq 0 ] || status=1
fi

( dmesg 2>/dev/null || echo "(kernel log unreadable)" ) | tail -n 40 > "$work/dmesg-after.txt"
if grep -E "NVRM: Xid" "$work/dmesg-after.txt" | grep -vxFf "$work/dmesg-before.txt" > "$work/xid.txt" 2>/dev/null \
   && [ -s "$work/xid.txt" ]; then
  say "kernel log: new GPU errors:"
  tee -a "$summary" < "$work/xid.txt"
  status=1
else
  say "kernel log: no new Xid lines"
fi

# What comes back: summary, report, charts, and everything in one tarball.
[ -f "$work/report/report.md" ] && cp "$work/report/report.md" "$out/report.md"
for png in "$work"/report/*.png; do [ -f "$png" ] && cp "$png" "$out/"; done
tar -czf "$out/bench-results.tar.gz" -C "$out" results
rm -rf "$work"
say "gpu-bench-all: exit $status; files: $(cd "$out" && ls | tr '\n' ' ')"
exit $status
