#!/usr/bin/env bash
# Build every cargo-fuzz target in fuzz/ and run each one for a while.
#
#   scripts/fuzz-smoke.sh                     # every target, 5 s each
#   FUZZ_SECONDS=600 scripts/fuzz-smoke.sh    # a longer campaign
#   scripts/fuzz-smoke.sh uart fw_cfg         # just these targets
#
# Run from anywhere. Installs cargo-fuzz (pinned) if `cargo fuzz` does not
# work yet, and needs a nightly toolchain (libFuzzer + ASan instrumentation).
# Each target runs on a COPY of its committed seed corpus (fuzz/corpus/<t>)
# in $FUZZ_WORK_DIR (default fuzz/corpus-tmp, git-ignored; it accumulates
# across runs, so repeated campaigns build on each other), so the tree
# stays clean. Crash inputs go to fuzz/artifacts/<t>/ (git-ignored); the
# script prints them and exits non-zero if any target crashed.
# Exit status: 0 clean, 1 a target crashed, 2 a usage/build problem,
# 3 the toolchain or cargo-fuzz could not be installed (callers may skip).
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 5)
#   FUZZ_RSS_MB     libFuzzer -rss_limit_mb (default 2048)
#   FUZZ_TIMEOUT    seconds one input may take before it counts as a hang (default 20)
#   FUZZ_TOOLCHAIN  rustup toolchain to build with (default nightly)
#   FUZZ_WORK_DIR   where the working corpora live (default fuzz/corpus-tmp)
#   FUZZ_ARGS       extra libFuzzer arguments, e.g. "-only_ascii=1"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CARGO_FUZZ_VERSION=0.13.2
SECONDS_PER_TARGET="${FUZZ_SECONDS:-5}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
TIMEOUT="${FUZZ_TIMEOUT:-20}"
TOOLCHAIN="${FUZZ_TOOLCHAIN:-nightly}"
WORK="${FUZZ_WORK_DIR:-$ROOT/fuzz/corpus-tmp}"
read -r -a EXTRA <<<"${FUZZ_ARGS:-}"

log() { echo "fuzz-smoke: $*"; }
# CPU_NOW = CPU seconds (user + sys) used so far by this shell's finished
# children. `times` must run in this shell, not in a $(...) subshell.
child_cpu() {
  times >"$WORK/.times"
  CPU_NOW=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } }
                 END { printf "%d", s }' "$WORK/.times")
}
now() { date +%s; }
t_start=$(now)

for tool in cargo rustup; do
  command -v "$tool" >/dev/null || { log "$tool not found: install rustup and a Rust toolchain" >&2; exit 2; }
done
if ! cargo "+$TOOLCHAIN" --version >/dev/null 2>&1; then
  log "toolchain '$TOOLCHAIN' missing: installing it (cargo-fuzz needs nightly for -Zsanitizer)"
  rustup toolchain install "$TOOLCHAIN" --profile minimal ||
    { log "could not install the $TOOLCHAIN toolchain" >&2; exit 3; }
fi

# cargo-fuzz itself is an ordinary binary: build it with the default
# toolchain, pinned and --locked so CI gets the same one every time.
if cargo fuzz --version >/dev/null 2>&1; then
  log "using $(cargo fuzz --version)"
else
  log "installing cargo-fuzz $CARGO_FUZZ_VERSION (takes a minute or two)"
  t0=$(now)
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked ||
    { log "could not install cargo-fuzz $CARGO_FUZZ_VERSION" >&2; exit 3; }
  log "cargo-fuzz installed in $(( $(now) - t0 )) s"
fi

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo "+$TOOLCHAIN" fuzz list)
fi
[ "${#targets[@]}" -gt 0 ] || { log "no fuzz targets found" >&2; exit 2; }

# One build for all targets (release, debug assertions and overflow checks
# on: an arithmetic overflow is a bug worth a crash report).
t0=$(now)
log "building ${#targets[@]} targets with $TOOLCHAIN"
cargo "+$TOOLCHAIN" fuzz build --debug-assertions
log "built in $(( $(now) - t0 )) s"

failed=()
summary=()
for t in "${targets[@]}"; do
  seeds="$ROOT/fuzz/corpus/$t"
  corpus="$WORK/$t"
  mkdir -p "$corpus"
  if [ -d "$seeds" ]; then
    cp -n "$seeds"/* "$corpus"/ 2>/dev/null || true
  fi
  out="$WORK/$t.log"
  log "running $t for ${SECONDS_PER_TARGET}s (corpus: $(ls "$corpus" | wc -l) inputs)"
  rc=0
  child_cpu
  cpu0=$CPU_NOW
  cargo "+$TOOLCHAIN" fuzz run --debug-assertions "$t" "$corpus" -- \
    -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb="$RSS_MB" -timeout="$TIMEOUT" \
    -print_final_stats=1 ${EXTRA[@]+"${EXTRA[@]}"} >"$out" 2>&1 || rc=$?
  child_cpu
  cpu=$(( CPU_NOW - cpu0 ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$out" | tail -1 | awk '{print $2}')
  if [ "$rc" -eq 0 ]; then
    status=ok
  else
    status="FAILED (exit $rc)"
    failed+=("$t")
    echo "----- $t crashed (full log: $out) -----"
    grep -E -A4 'panicked at|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)' "$out" | head -n 30 || true
    artifact=$(grep -Eo 'Test unit written to [^ ]+' "$out" | tail -1 | awk '{print $NF}' || true)
    if [ -n "$artifact" ]; then
      echo "fuzz-smoke: $t: crash input: $artifact"
      echo "fuzz-smoke: $t: reproduce:   cargo +$TOOLCHAIN fuzz run -a $t $artifact"
      echo "fuzz-smoke: $t: minimise:    cargo +$TOOLCHAIN fuzz tmin -a $t $artifact"
    else
      tail -n 20 "$out"
    fi
    echo "-----"
  fi
  summary+=("$(printf '%-16s %12s execs %8s exec/s  cov %6s  cpu %5ss  %s' \
    "$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" "$cpu" "$status")")
done

echo
log "summary (${SECONDS_PER_TARGET}s per target; logs and corpora in $WORK):"
printf '  %s\n' "${summary[@]}"
log "total wall time $(( $(now) - t_start )) s"
if [ "${#failed[@]}" -gt 0 ]; then
  log "CRASHES in: ${failed[*]} (inputs under fuzz/artifacts/<target>/; see fuzz/README.md to reproduce and minimise)" >&2
  exit 1
fi
