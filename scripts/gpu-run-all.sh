#!/usr/bin/env bash
# Runs on a GPU machine from a dist/ folder (`make dist`): nvhcq info, the GPU
# test binary and the benchmarks, with the kernel log before and after. Logs go
# to $OUT (default ./gpu-logs). Usage: ./gpu-run-all.sh [gtest filter]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/gpu-logs}
mkdir -p "$out"
filter=${1:-*}
( dmesg 2>/dev/null || echo "(kernel log unreadable)" ) | tail -n 50 > "$out/dmesg-before.txt"
# Every GPU message logged during the run, classified (Xid meanings, processes).
"$here/nvhcq" kernel-log --follow > "$out/kernel-log.txt" 2>&1 &
follower=$!
"$here/nvhcq" info 2>&1 | tee "$out/info.txt"
status=0
tests=("$here"/tests/test_gpu)
if [ "${STRESS:-0}" = "1" ]; then tests+=("$here"/tests/test_stress); fi
for t in "${tests[@]}"; do
  [ -x "$t" ] || continue
  "$t" --gtest_filter="$filter" 2>&1 | tee "$out/$(basename "$t").txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
sleep 1  # late messages; the follower prints its summary when stopped
kill "$follower" 2>/dev/null
wait "$follower" 2>/dev/null
tail -n 1 "$out/kernel-log.txt"
( dmesg 2>/dev/null || echo "(kernel log unreadable)" ) | tail -n 50 > "$out/dmesg-after.txt"
grep -E "NVRM: Xid|nvgpu:" "$out/dmesg-after.txt" && echo "kernel log has GPU errors (see $out/dmesg-after.txt)"
exit $status
