#!/usr/bin/env bash
# Copies what a GPU machine needs from a build folder into a dist folder:
# the nvhcq command, the test and benchmark programs, the tools and the scripts
# that run them (docs/gpu-testing.md). Usage: make-dist.sh BUILD_DIR DIST_DIR
set -euo pipefail
build=${1:-build}
dist=${2:-dist}
rm -rf "$dist"
mkdir -p "$dist/tests" "$dist/bench" "$dist/tools"
cp "$build/nvhcq" "$dist/"
cp "$build"/tests/test_gpu "$build"/tests/test_stress "$dist/tests/"  # the others need no GPU
cp "$build"/bench/bench_* "$dist/bench/" 2>/dev/null || true
cp "$build"/tools/tool_* "$build"/tools/*.so "$dist/tools/" 2>/dev/null || true
cp scripts/gpu-run-all.sh scripts/gpu-probe.sh scripts/gpu-bench-all.sh "$dist/"
# Kernels compiled here for the GPU machines' architectures, so a fresh GPU
# machine starts without NVRTC work (point NVHCQ_CACHE_DIR at dist/kernel-cache).
if [ -x "$build/tools/tool_compile_kernel" ]; then
  for arch in ${NVHCQ_DIST_ARCHS:-sm_90}; do
    for k in src/kernels/*.cu; do
      target=$arch
      # Warpgroup (wgmma) kernels exist only for the architecture-specific target.
      case "$(basename "$k")" in *wgmma*) [ "$arch" = sm_90 ] && target=sm_90a ;; esac
      NVHCQ_CACHE_DIR="$dist/kernel-cache" "$build/tools/tool_compile_kernel" "$(basename "$k")" "$target" /dev/null \
        >/dev/null || echo "warning: $(basename "$k") did not compile for $target" >&2
    done
  done
fi
strip "$dist/nvhcq" "$dist"/tests/* "$dist"/bench/* "$dist"/tools/* 2>/dev/null || true
du -sh "$dist"
