#!/usr/bin/env bash
# Builds every fuzz target once (cargo fuzz, libFuzzer with AddressSanitizer) and runs each
# for SECONDS (default 30), FUZZ_JOBS at a time (default: the number of CPUs). Each run
# starts from the checked-in seeds (fuzz/seeds/<target>, drawn from the tests) and keeps
# what it learns in fuzz/corpus/<target>; a crash is saved in fuzz/artifacts/<target>/ and
# fails the script. Needs cargo-fuzz (`cargo install cargo-fuzz`) and a C++ compiler.
#
#   fuzz/run.sh          # every target, 30 s each
#   fuzz/run.sh 600 mcp_frames journal   # some targets, longer
#
# Only stable Rust is needed: cargo fuzz passes nightly-only flags (-Zsanitizer=address),
# which RUSTC_BOOTSTRAP=1 makes stable rustc accept. FUZZ_SANITIZER=none builds without
# ASan (faster; the code under test has no unsafe).
set -euo pipefail
seconds=${1:-30}
shift || true
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
# Its own target directory: this build uses other flags than the main one.
export CARGO_TARGET_DIR="$PWD/target"
sanitizer=${FUZZ_SANITIZER:-address}
jobs=${FUZZ_JOBS:-$(nproc)}

if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi
started=$(date +%s)
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
if [ $# -gt 0 ]; then
    for target in "${targets[@]}"; do
        cargo fuzz build --sanitizer "$sanitizer" "$target" >>"$build_log" 2>&1 ||
            { cat "$build_log" >&2; exit 1; }
    done
else
    cargo fuzz build --sanitizer "$sanitizer" >"$build_log" 2>&1 || { cat "$build_log" >&2; exit 1; }
fi
triple=$(rustc -vV | sed -n 's/^host: //p')
bin="$CARGO_TARGET_DIR/$triple/release"
for target in "${targets[@]}"; do
    if [ ! -x "$bin/$target" ]; then
        echo "fuzz: $target did not build" >&2
        exit 1
    fi
done
built=$(date +%s)
echo "fuzz: built ${#targets[@]} targets in $((built - started)) s; running each for $seconds s, $jobs at a time"

logs=$(mktemp -d)
trap 'rm -rf "$logs" "$build_log"' EXIT
run() {
    local target=$1 rc=0
    mkdir -p "corpus/$target" "artifacts/$target"
    "$bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="artifacts/$target/" \
        "corpus/$target" "seeds/$target" >"$logs/$target.log" 2>&1 || rc=$?
    echo "$rc" >"$logs/$target.rc"
}
running=0
for target in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    run "$target" &
    running=$((running + 1))
done
wait
failed=()
for target in "${targets[@]}"; do
    if [ "$(cat "$logs/$target.rc")" = 0 ]; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$target.log")
        echo "fuzz: $target: ok, ${runs:-?} runs"
    else
        failed+=("$target")
        echo "fuzz: $target FAILED:" >&2
        tail -n 40 "$logs/$target.log" >&2
    fi
done
echo "fuzz: done in $(($(date +%s) - started)) s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: crashes in ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
