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
# Before fuzzing a target it replays every committed regression input in
# fuzz/regressions/<t>/ (crashes found earlier, minimised, kept after their
# fix): one that crashes again fails the run like a new crash.
# Longer campaigns with corpus minimisation: scripts/fuzz-campaign.sh.
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
#   FUZZ_ARTIFACT_DIR  crash inputs go to $FUZZ_ARTIFACT_DIR/<t>/ (default fuzz/artifacts/<t>/)
#   FUZZ_BUILD_ONLY    1: install what is missing, build every target, run none
#   FUZZ_SKIP_BUILD    1: the targets are built already (a caller built them)
# Besides its log ($WORK/<t>.log) each run leaves $WORK/<t>.stats, one line of
# key=value pairs (execs, exec_per_sec, cov, ft, corpus, cpu_s, status) for
# scripts that gather results (scripts/fuzz-campaign.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CARGO_FUZZ_VERSION=0.13.2
SECONDS_PER_TARGET="${FUZZ_SECONDS:-5}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
TIMEOUT="${FUZZ_TIMEOUT:-20}"
TOOLCHAIN="${FUZZ_TOOLCHAIN:-nightly}"
WORK="${FUZZ_WORK_DIR:-$ROOT/fuzz/corpus-tmp}"
ARTIFACTS="${FUZZ_ARTIFACT_DIR:-}"
read -r -a EXTRA <<<"${FUZZ_ARGS:-}"

log() { echo "fuzz-smoke: $*"; }
# CPU_NOW = CPU seconds (user + sys) used so far by this shell's finished
# children. `times` must run in this shell, not in a $(...) subshell. The
# file is this process's own: a campaign runs several of these in one $WORK.
child_cpu() {
  times >"$WORK/.times.$$"
  CPU_NOW=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } }
                 END { printf "%d", s }' "$WORK/.times.$$")
}
now() { date +%s; }
t_start=$(now)
mkdir -p "$WORK"
trap 'rm -f "$WORK/.times.$$"' EXIT

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
# on: an arithmetic overflow is a bug worth a crash report). Every later
# `cargo fuzz run` passes the same flag, so none of them rebuilds.
if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  t0=$(now)
  log "building ${#targets[@]} targets with $TOOLCHAIN"
  cargo "+$TOOLCHAIN" fuzz build --debug-assertions || { log "the fuzz targets did not build" >&2; exit 2; }
  log "built in $(( $(now) - t0 )) s"
fi
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

# replay_regressions TARGET: run each committed regression input of TARGET
# once (libFuzzer runs files given by name one by one and exits non-zero on
# the first crash). Returns non-zero, after printing the panic, if one
# crashes again.
replay_regressions() {
  local t=$1 dir="$ROOT/fuzz/regressions/$1" out="$WORK/$1.replay.log"
  local inputs=()
  [ -d "$dir" ] && mapfile -t inputs < <(find "$dir" -type f ! -name '*.md' | sort)
  [ "${#inputs[@]}" -gt 0 ] || return 0
  if cargo "+$TOOLCHAIN" fuzz run --debug-assertions "$t" "${inputs[@]}" -- \
    -rss_limit_mb="$RSS_MB" -timeout="$TIMEOUT" >"$out" 2>&1; then
    log "$t: ${#inputs[@]} regression input(s) in fuzz/regressions/$t replayed, none crashes"
    return 0
  fi
  echo "----- $t: a committed regression input crashes again (full log: $out) -----"
  grep -E '^Running: ' "$out" | tail -1 || true
  grep -E -A4 'panicked at|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)' "$out" | head -n 30 || tail -n 20 "$out"
  echo "-----"
  return 1
}

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
  if ! replay_regressions "$t"; then
    failed+=("$t")
    summary+=("$(printf '%-16s %s' "$t" "FAILED: a regression input in fuzz/regressions/$t crashes again")")
    echo "rc=regressed" >"$WORK/$t.stats"
    continue
  fi
  art=()
  if [ -n "$ARTIFACTS" ]; then
    mkdir -p "$ARTIFACTS/$t"
    # libFuzzer takes the last -artifact_prefix; cargo fuzz passes its own first.
    art=("-artifact_prefix=$ARTIFACTS/$t/")
  fi
  log "running $t for ${SECONDS_PER_TARGET}s (corpus: $(ls "$corpus" | wc -l) inputs)"
  rc=0
  child_cpu
  cpu0=$CPU_NOW
  cargo "+$TOOLCHAIN" fuzz run --debug-assertions "$t" "$corpus" -- \
    -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb="$RSS_MB" -timeout="$TIMEOUT" \
    -print_final_stats=1 ${art[@]+"${art[@]}"} ${EXTRA[@]+"${EXTRA[@]}"} >"$out" 2>&1 || rc=$?
  child_cpu
  cpu=$(( CPU_NOW - cpu0 ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out" | tail -1)
  # The last status line libFuzzer printed (DONE, or the last pulse before a crash).
  cov=$(grep -Eo 'cov: [0-9]+' "$out" | tail -1 | awk '{print $2}')
  ft=$(grep -Eo 'ft: [0-9]+' "$out" | tail -1 | awk '{print $2}')
  printf 'execs=%s exec_per_sec=%s cov=%s ft=%s corpus=%s cpu_s=%s rc=%s\n' \
    "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$(ls "$corpus" | wc -l)" "$cpu" "$rc" >"$WORK/$t.stats"
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
  summary+=("$(printf '%-16s %12s execs %8s exec/s  cov %6s  ft %6s  cpu %5ss  %s' \
    "$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$cpu" "$status")")
done

echo
log "summary (${SECONDS_PER_TARGET}s per target; logs and corpora in $WORK):"
printf '  %s\n' "${summary[@]}"
log "total wall time $(( $(now) - t_start )) s"
if [ "${#failed[@]}" -gt 0 ]; then
  log "CRASHES in: ${failed[*]} (inputs under ${ARTIFACTS:-fuzz/artifacts}/<target>/ or fuzz/regressions/<target>/; see fuzz/README.md to reproduce and minimise)" >&2
  exit 1
fi
