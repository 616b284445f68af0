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
cp "$build"/tests/test_* "$dist/tests/" 2>/dev/null || true
cp "$build"/bench/bench_* "$dist/bench/" 2>/dev/null || true
cp "$build"/tools/tool_* "$build"/tools/*.so "$dist/tools/" 2>/dev/null || true
cp scripts/gpu-run-all.sh scripts/gpu-probe.sh "$dist/"
strip "$dist/nvhcq" "$dist"/tests/* "$dist"/bench/* "$dist"/tools/* 2>/dev/null || true
du -sh "$dist"
