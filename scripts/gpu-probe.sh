#!/usr/bin/env bash
# Collects, on a machine with an NVIDIA GPU, what nvhcq needs to know about it:
# driver and device facts, `nvhcq info`, the SASS of the self-test kernels, an
# ioctl trace of one libcuda launch and of nvhcq opening the GPU, and the GPU
# test suite (a quick smoke test first, then everything). Run from a dist/
# folder (`make dist`); logs go to $OUT (default ./gpu-logs).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/gpu-logs}
mkdir -p "$out"
trace_lib="$here/tools/libnvhcq_ioctl_trace.so"

{
  echo "== nvidia-smi"; nvidia-smi 2>&1 | head -20
  echo "== driver"; cat /proc/driver/nvidia/version 2>&1
  echo "== nodes"; ls -la /dev/nvidia* 2>&1
  echo "== kernel"; uname -a; head -3 /etc/os-release 2>/dev/null
  echo "== CUDA"; ls -d /usr/local/cuda* 2>&1; command -v cuobjdump nvdisasm nvcc
  echo "== nvhcq info"; "$here/nvhcq" info 2>&1
} > "$out/system.txt" 2>&1
cat "$out/system.txt"

"$here/tools/tool_compile_kernel" selftest.cu sm_90 "$out/selftest_sm90.cubin" >/dev/null 2>&1 &&
  cuobjdump -sass "$out/selftest_sm90.cubin" > "$out/sass.txt" 2>&1
rm -f "$out/selftest_sm90.cubin"

( dmesg 2>/dev/null || echo "(kernel log unreadable)" ) | tail -n 30 > "$out/dmesg.txt"
echo "== libcuda launch (traced)" >> "$out/system.txt"
LD_PRELOAD="$trace_lib" NVHCQ_TRACE_FILE="$out/trace_cuda.txt" timeout 60 "$here/tools/tool_cuda_probe" >> "$out/system.txt" 2>&1
LD_PRELOAD="$trace_lib" NVHCQ_TRACE_FILE="$out/trace_nvhcq.txt" timeout 60 "$here/nvhcq" info > /dev/null 2>&1

echo "== smoke test" | tee -a "$out/test_gpu.txt"
NVHCQ_LOG=debug timeout 120 "$here/tests/test_gpu" --gtest_filter='*SignalFromComputeAndCopy*:*ExecOneKernel*' 2>&1 | tee -a "$out/test_gpu.txt"
smoke=${PIPESTATUS[0]}
if [ "$smoke" -eq 0 ]; then
  echo "== full suite" | tee -a "$out/test_gpu.txt"
  timeout 400 "$here/tests/test_gpu" 2>&1 | tee -a "$out/test_gpu.txt"
fi
echo "== dmesg after" >> "$out/dmesg.txt"
( dmesg 2>/dev/null || echo "(kernel log unreadable)" ) | tail -n 60 >> "$out/dmesg.txt"
grep -E "NVRM: Xid|nvgpu:" "$out/dmesg.txt" | tail -5
