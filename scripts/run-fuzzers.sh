#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cpp) with clang in $FUZZ_DIR and
# runs each for $FUZZ_SECONDS seconds on its seed corpus. Fails on any finding
# (crash, sanitizer report, uncaught exception, timeout, oversized allocation);
# the input that caused it is saved under $FUZZ_DIR/fuzz-findings/.
# Without clang or libFuzzer it says so and fails only when CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_DIR=${FUZZ_DIR:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-$(nproc)}
CC_BIN=${FUZZ_CC:-clang}
CXX_BIN=${FUZZ_CXX:-clang++}
# Largest input tried: big enough for the header, metadata and tensor table of a
# real file (the vocab seeds are cut to this), small enough to fuzz fast.
MAX_LEN=${FUZZ_MAX_LEN:-65536}
# No single allocation may exceed this: a count or length taken from the input
# must be bounded by the input's size before anything is allocated for it.
MALLOC_LIMIT_MB=${FUZZ_MALLOC_LIMIT_MB:-256}

unavailable() {
  echo "nvhcq fuzz: $1" >&2
  echo "nvhcq fuzz: install the Debian packages clang and libclang-rt-14-dev" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  echo "nvhcq fuzz: skipped (fuzzing is required only in CI)" >&2
  exit 0
}

command -v "$CXX_BIN" >/dev/null 2>&1 || unavailable "$CXX_BIN not found"
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  > "$probe_dir/probe.cpp"
"$CXX_BIN" -fsanitize=fuzzer,address,undefined "$probe_dir/probe.cpp" -o "$probe_dir/probe" \
  >/dev/null 2>&1 || unavailable "$CXX_BIN cannot link a libFuzzer target (libFuzzer runtime missing)"

cmake -S . -B "$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_CXX_COMPILER="$CXX_BIN" \
  -DNVHCQ_FUZZ=ON -DNVHCQ_TESTS=OFF >/dev/null
cmake --build "$FUZZ_DIR" -j "$JOBS" --target nvhcq_fuzz

failed=()
for fuzzer in "$FUZZ_DIR"/fuzz/fuzz_*; do
  name=$(basename "$fuzzer")
  name=${name#fuzz_}
  seeds="$FUZZ_DIR/fuzz-seeds/$name"
  corpus="$FUZZ_DIR/fuzz-corpus/$name"  # grows across runs; seeds stay read-only
  findings="$FUZZ_DIR/fuzz-findings"
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$findings"
  if [ -x "$FUZZ_DIR/fuzz/seeds/make_${name}_seeds" ]; then
    "$FUZZ_DIR/fuzz/seeds/make_${name}_seeds" "$seeds"
  fi
  if [ "$name" = "gguf_reader" ]; then
    cp tests/data/vocab/*.gguf "$seeds/"
  fi
  echo "nvhcq fuzz: running $name for ${FUZZ_SECONDS}s ($(ls "$seeds" | wc -l) seeds)"
  log="$FUZZ_DIR/fuzz-$name.log"
  options=()
  if [ -f "tests/fuzz/${name}_fuzz.options" ]; then
    read -r -a options < "tests/fuzz/${name}_fuzz.options"
  fi
  set +e
  "$fuzzer" -max_total_time="$FUZZ_SECONDS" -max_len="$MAX_LEN" "${options[@]}" \
    -malloc_limit_mb="$MALLOC_LIMIT_MB" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$findings/$name-" \
    "$corpus" "$seeds" >"$log" 2>&1
  rc=$?
  set -e
  grep -E '^stat::|^#[0-9]+ +DONE|^Done' "$log" || true
  if [ $rc -ne 0 ]; then
    tail -n 40 "$log" >&2
    echo "nvhcq fuzz: $name FOUND A PROBLEM (exit $rc); input saved under $findings/" >&2
    failed+=("$name")
  else
    echo "nvhcq fuzz: $name ran without findings"
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "nvhcq fuzz: findings in: ${failed[*]}" >&2
  exit 1
fi
