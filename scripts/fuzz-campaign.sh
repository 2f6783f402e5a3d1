#!/usr/bin/env bash
# A fuzzing campaign: every cargo-fuzz target (or the ones named) runs for
# FUZZ_MINUTES on a corpus kept OUTSIDE git, the corpus is minimised
# afterwards, and every crash is minimised and filed as a regression input
# that the smoke run (scripts/fuzz-smoke.sh, which CI runs) replays.
#
#   nice -n 19 scripts/fuzz-campaign.sh               # every target, 10 min each, 2 at a time
#   FUZZ_MINUTES=60 FUZZ_JOBS=1 scripts/fuzz-campaign.sh uart fw_cfg
#
# Steps (each reuses scripts/fuzz-smoke.sh for the install, build, seeding,
# regression replay and the libFuzzer run itself):
#   1. build every target once (fuzz-smoke.sh, FUZZ_BUILD_ONLY=1);
#   2. split the targets into FUZZ_JOBS lanes (round robin); each lane is one
#      fuzz-smoke.sh run over its targets, FUZZ_MINUTES each, all lanes at once;
#   3. minimise each target's corpus (libFuzzer -merge=1 into a fresh folder,
#      what `cargo fuzz cmin` does, but swapped in place inside the campaign
#      folder so the corpus may live on another filesystem than the checkout);
#   4. minimise each crash input (`cargo fuzz tmin`) and copy it to
#      fuzz/regressions/<target>/<kind>-<sha1> (committed with the fix: from
#      then on every smoke run replays it and fails if the bug is back);
#   5. print a table (and write it to $DIR/summary.md): per target execs,
#      exec/s, cov and ft from libFuzzer's last status line, CPU seconds,
#      corpus inputs at the start, after the run and after minimisation (and
#      its bytes), crashes.
#
# Exit status: 0 no crash, 1 a target crashed (its minimised input is in
# fuzz/regressions/ now: fix the bug, then commit both), 2 a usage or build
# problem, 3 the toolchain or cargo-fuzz could not be installed.
#
# Environment:
#   FUZZ_MINUTES       minutes per target (default 10)
#   FUZZ_JOBS          targets fuzzed at the same time (default 2; one core each)
#   FUZZ_CAMPAIGN_DIR  corpora, crash inputs, logs, summary (default
#                      ${XDG_CACHE_HOME:-~/.cache}/trapline/fuzz-campaign);
#                      kept between campaigns so each builds on the last
#   FUZZ_TMIN_RUNS     libFuzzer -runs for each crash minimisation (default 20000)
#   FUZZ_RSS_MB, FUZZ_TIMEOUT, FUZZ_TOOLCHAIN, FUZZ_ARGS: as for fuzz-smoke.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The campaign folder as the caller meant it (relative to where they are).
DIR=$(realpath -m -- "${FUZZ_CAMPAIGN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/trapline/fuzz-campaign}")
cd "$ROOT"
SMOKE="$ROOT/scripts/fuzz-smoke.sh"

log() { echo "fuzz-campaign: $*"; }
usage() { log "$*" >&2; exit 2; }

MINUTES="${FUZZ_MINUTES:-10}"
JOBS="${FUZZ_JOBS:-2}"
TOOLCHAIN="${FUZZ_TOOLCHAIN:-nightly}"
TMIN_RUNS="${FUZZ_TMIN_RUNS:-20000}"
[[ "$MINUTES" =~ ^[1-9][0-9]*$ ]] || usage "FUZZ_MINUTES must be a whole number of minutes >= 1, not '$MINUTES'"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || usage "FUZZ_JOBS must be a whole number >= 1, not '$JOBS'"
[[ "$TMIN_RUNS" =~ ^[1-9][0-9]*$ ]] || usage "FUZZ_TMIN_RUNS must be a whole number >= 1, not '$TMIN_RUNS'"
case "$DIR" in
  "$ROOT"/fuzz/corpus | "$ROOT"/fuzz/corpus/* | "$ROOT"/fuzz/regressions*)
    usage "FUZZ_CAMPAIGN_DIR must not be a committed folder ($DIR)" ;;
esac
WORK="$DIR/corpus"       # <t>/ the corpus, <t>.log, <t>.stats (fuzz-smoke.sh's layout)
ARTIFACTS="$DIR/artifacts"
mkdir -p "$WORK" "$ARTIFACTS" || usage "cannot create the campaign folder $DIR"
t_start=$(date +%s)

# 1. Install what is missing and build every target once.
build_rc=0
FUZZ_BUILD_ONLY=1 "$SMOKE" || build_rc=$?
[ "$build_rc" -eq 0 ] || exit "$build_rc"

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo "+$TOOLCHAIN" fuzz list)
fi
[ "${#targets[@]}" -gt 0 ] || usage "no fuzz targets found"
known=$(cargo "+$TOOLCHAIN" fuzz list)
for t in "${targets[@]}"; do
  grep -qx -- "$t" <<<"$known" || usage "no fuzz target '$t' (cargo +$TOOLCHAIN fuzz list names them)"
done

count() { find "$1" -maxdepth 1 -type f 2>/dev/null | wc -l; }
bytes() { find "$1" -maxdepth 1 -type f -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
stat_of() { # stat_of TARGET KEY: a value from fuzz-smoke.sh's <t>.stats
  sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$WORK/$1.stats" 2>/dev/null | head -1
}

# The corpus at the start: what earlier campaigns kept, plus the committed seeds.
declare -A start_n
for t in "${targets[@]}"; do
  mkdir -p "$WORK/$t" "$ARTIFACTS/$t"
  [ -d "fuzz/corpus/$t" ] && cp -n "fuzz/corpus/$t"/* "$WORK/$t"/ 2>/dev/null || true
  start_n[$t]=$(count "$WORK/$t")
  rm -f "$WORK/$t.stats"
done
# Crash inputs newer than this are this campaign's (older ones were filed before).
touch "$DIR/.started"

# 2. The lanes.
lanes=()
for ((j = 0; j < JOBS; j++)); do lanes+=(""); done
i=0
for t in "${targets[@]}"; do
  lanes[$((i % JOBS))]+="$t "
  i=$((i + 1))
done
log "${#targets[@]} targets, ${MINUTES} min each, $JOBS at a time: about $(( (${#targets[@]} + JOBS - 1) / JOBS * MINUTES )) min; corpora in $WORK"
pids=()
for ((j = 0; j < JOBS; j++)); do
  [ -n "${lanes[$j]}" ] || continue
  read -r -a lane <<<"${lanes[$j]}"
  log "lane $j: ${lane[*]} (log: $DIR/lane-$j.log)"
  FUZZ_SKIP_BUILD=1 FUZZ_SECONDS=$((MINUTES * 60)) FUZZ_WORK_DIR="$WORK" \
    FUZZ_ARTIFACT_DIR="$ARTIFACTS" "$SMOKE" "${lane[@]}" >"$DIR/lane-$j.log" 2>&1 &
  pids+=($!)
done
# A lane's status is not the campaign's: a crash is handled below, per target.
for p in "${pids[@]}"; do wait "$p" || true; done

# 3. Minimise every corpus.
declare -A run_n min_n min_bytes
for t in "${targets[@]}"; do
  run_n[$t]=$(count "$WORK/$t")
  fresh="$WORK/$t.cmin"
  rm -rf "$fresh"
  mkdir -p "$fresh"
  if cargo "+$TOOLCHAIN" fuzz run --debug-assertions "$t" "$fresh" "$WORK/$t" -- \
    -merge=1 -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -timeout="${FUZZ_TIMEOUT:-20}" \
    >"$WORK/$t.cmin.log" 2>&1 && [ "$(count "$fresh")" -gt 0 ]; then
    rm -rf "$WORK/$t"
    mv "$fresh" "$WORK/$t"
  else
    log "$t: corpus minimisation failed, the corpus is kept as it was (log: $WORK/$t.cmin.log)" >&2
    rm -rf "$fresh"
  fi
  min_n[$t]=$(count "$WORK/$t")
  min_bytes[$t]=$(bytes "$WORK/$t")
done

# 4. Every new crash: minimise, file as a regression input.
declare -A found
crashed=()
for t in "${targets[@]}"; do
  found[$t]=0
  mapfile -t inputs < <(find "$ARTIFACTS/$t" -maxdepth 1 -type f -newer "$DIR/.started" | sort)
  for f in ${inputs[@]+"${inputs[@]}"}; do
    name=$(basename "$f")
    case "$name" in crash-* | oom-* | timeout-* | leak-*) ;; *) continue ;; esac
    kind=${name%%-*}
    dest="fuzz/regressions/$t/$kind-$(sha1sum "$f" | cut -c1-12)"
    min="$ARTIFACTS/$t/minimized-from-$name"
    if [ "$kind" = crash ] && cargo "+$TOOLCHAIN" fuzz tmin --debug-assertions -r "$TMIN_RUNS" "$t" "$f" -- \
      -exact_artifact_path="$min" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -timeout="${FUZZ_TIMEOUT:-20}" \
      >"$DIR/tmin-$t-$name.log" 2>&1 && [ -s "$min" ]; then
      dest="fuzz/regressions/$t/$kind-$(sha1sum "$min" | cut -c1-12)"
      src=$min
    else
      # Timeouts, OOMs and leaks are kept whole (tmin keeps only crashes);
      # a crash tmin could not shrink is kept as found.
      src=$f
    fi
    mkdir -p "fuzz/regressions/$t"
    cp "$src" "$dest"
    found[$t]=$((found[$t] + 1))
    log "$t: $name -> $dest ($(wc -c <"$src") bytes); reproduce: cargo +$TOOLCHAIN fuzz run -a $t $dest"
  done
  [ "${found[$t]}" -eq 0 ] || crashed+=("$t")
done

# 5. The table.
{
  echo "| target | execs | exec/s | cov | ft | CPU s | corpus at start | after the run | after minimisation | bytes | crashes |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  for t in "${targets[@]}"; do
    rc=$(stat_of "$t" rc)
    case "$rc" in
      0) verdict=none ;;
      regressed) verdict="a committed regression input crashes again" ;;
      "") verdict="did not run (see $DIR/lane-*.log)" ;;
      *) verdict="${found[$t]} (exit $rc)" ;;
    esac
    echo "| $t | $(stat_of "$t" execs) | $(stat_of "$t" exec_per_sec) | $(stat_of "$t" cov) | $(stat_of "$t" ft) | $(stat_of "$t" cpu_s) | ${start_n[$t]} | ${run_n[$t]} | ${min_n[$t]} | ${min_bytes[$t]} | $verdict |"
  done
} >"$DIR/summary.md"
echo
log "summary (${MINUTES} min per target, $JOBS at a time, wall time $(( ($(date +%s) - t_start) / 60 )) min):"
cat "$DIR/summary.md"
log "logs: $WORK/<target>.log; corpora: $WORK/<target>/; lanes: $DIR/lane-*.log"
if [ "${#crashed[@]}" -gt 0 ]; then
  log "CRASHES in: ${crashed[*]}: the minimised inputs are in fuzz/regressions/<target>/ now;" >&2
  log "fix each bug, then commit the fix with its input (fuzz/README.md, 'When a target crashes')" >&2
  exit 1
fi
bad=0
for t in "${targets[@]}"; do
  rc=$(stat_of "$t" rc)
  [ "$rc" = 0 ] || bad=1
done
exit "$bad"
