#!/usr/bin/env bash
# Boot the emulated ARM64 KVM host and run a folder of tests in it.
#
#   scripts/arm64/run-host.sh [--timeout S] [--test-timeout S] [--smp N] [--mem MIB] TESTDIR
#
# TESTDIR holds the tests' files (static aarch64 binaries, scripts, data)
# and a file `tests` listing the tests, one a line (blank and '#' lines are
# skipped):
#   NAME [timeout=SECONDS] COMMAND...
# The command runs with `sh -c` in /tests (TESTDIR's copy, also on PATH);
# status 0 passes, 77 skips, anything else or its timeout fails. A folder
# TESTDIR/rootfs/, if there, is laid over the initramfs's root instead of
# being copied to /tests (for files that must be at fixed paths). A folder
# TESTDIR/modules/, if there, holds kernel modules (.ko) the host loads
# before the first test, in the order its file `order` lists them.
#
# It packs a busybox initramfs (cpio newc; the project's own /init, init.sh here, plus
# TESTDIR), boots QEMU's arm64 `virt` machine with EL2 under TCG so Debian's
# arm64 kernel offers /dev/kvm, streams the console, and prints a summary.
# Needs what setup.sh installs (it does not run it).
#
# Options: --timeout S       the whole boot, host side (default 1500)
#          --test-timeout S  one test, unless its line says (default 600)
#          --smp N, --mem MIB  the emulated host (default 2, 2048)
# Environment: TRAPLINE_ARM64_APPEND  more kernel arguments (e.g. loglevel=7
#              initcall_debug, to see the boot's time go where)
# Exit status: 0 every test passed or skipped; 1 a test failed, or the host
# had no /dev/kvm or did not reach its end (timeout, panic); 2 usage.
# Timings under TCG say nothing about real hardware: use them for nothing
# but the budget.
set -euo pipefail
# shellcheck source=scripts/arm64/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

log() { echo "arm64/run-host: $*"; }
usage() {
  echo "usage: scripts/arm64/run-host.sh [--timeout S] [--test-timeout S] [--smp N] [--mem MIB] TESTDIR" >&2
  exit 2
}
number() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "arm64/run-host: $1 needs a positive whole number, got '$2'" >&2; exit 2; }; }

timeout_s=1500 test_timeout_s=600 smp=2 mem=2048 testdir=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --timeout) [ "$#" -ge 2 ] || usage; number "$1" "$2"; timeout_s=$2; shift 2 ;;
    --test-timeout) [ "$#" -ge 2 ] || usage; number "$1" "$2"; test_timeout_s=$2; shift 2 ;;
    --smp) [ "$#" -ge 2 ] || usage; number "$1" "$2"; smp=$2; shift 2 ;;
    --mem) [ "$#" -ge 2 ] || usage; number "$1" "$2"; mem=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "arm64/run-host: unknown option $1" >&2; usage ;;
    *) [ -z "$testdir" ] || usage; testdir=$1; shift ;;
  esac
done
[ -n "$testdir" ] || usage
[ -f "$testdir/tests" ] || { echo "arm64/run-host: $testdir/tests not found: TESTDIR needs its list of tests" >&2; exit 2; }
for need in "$ARM64_QEMU" cpio; do
  command -v "$need" >/dev/null || { echo "arm64/run-host: $need not found: run scripts/arm64/setup.sh" >&2; exit 2; }
done
if [ ! -s "$ARM64_KERNEL" ] || [ ! -x "$ARM64_BUSYBOX" ]; then
  echo "arm64/run-host: no kernel or busybox in $ARM64_CACHE: run scripts/arm64/setup.sh" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/arm64-host.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage="$work/root"
mkdir -p "$stage/bin" "$stage/tests"

# --- the initramfs ---------------------------------------------------------
install -m 0755 "$ARM64_BUSYBOX" "$stage/bin/busybox"
install -m 0755 "$(dirname "${BASH_SOURCE[0]}")/init.sh" "$stage/init"
tar -C "$testdir" --exclude=./rootfs -cf - . | tar -C "$stage/tests" -xf -
if [ -d "$testdir/rootfs" ]; then
  tar -C "$testdir/rootfs" -cf - . | tar -C "$stage" -xf -
fi
initrd="$work/initramfs.cpio"
# Not compressed: the guest would gunzip it on an emulated CPU, which cost
# 6-7 s of boot for 60 MiB of test executables, where QEMU loads the plain
# archive in a blink.
(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --owner=0:0 --quiet) >"$initrd"
log "initramfs: $(du -k "$initrd" | cut -f 1) KiB; $(grep -cvE '^[[:space:]]*(#|$)' "$testdir/tests") tests"

# --- boot ------------------------------------------------------------------
# virtualization=on gives the emulated CPU EL2, so the kernel starts there
# and brings up KVM (in VHE mode with -cpu max); gic-version=3 because KVM
# then offers vGICv3 (and an ITS) to its guests. panic=-1 with -no-reboot
# makes a kernel panic end QEMU at once instead of waiting for the timeout.
# Under TCG two boot steps cost seconds and test nothing of ours: the crypto
# self-tests (cryptomgr.notests) and write-protecting the kernel's memory
# with its W+X check (rodata=off); skipping them saves about a third.
append="console=ttyAMA0 rdinit=/init panic=-1 quiet cryptomgr.notests=1 rodata=off arm64_test_timeout=$test_timeout_s ${TRAPLINE_ARM64_APPEND:-}"
console="$work/console.log"
log "booting: $ARM64_QEMU -M virt,virtualization=on,gic-version=3 -cpu max -smp $smp -m $mem (timeout ${timeout_s} s)"
t0=$(date +%s.%N)
t_up=""
set +e
timeout -k 10 "$timeout_s" "$ARM64_QEMU" -nodefaults -no-reboot -display none \
  -machine virt,virtualization=on,gic-version=3 -cpu max -smp "$smp" -m "$mem" \
  -serial stdio -kernel "$ARM64_KERNEL" -initrd "$initrd" -append "$append" </dev/null 2>&1 |
  while IFS= read -r line; do
    line=${line%$'\r'}
    printf '%s\n' "$line"
    printf '%s\n' "$line" >>"$console"
    case "$line" in
      ARM64-HOST-UP*) [ -n "$t_up" ] || { t_up=$(date +%s.%N); echo "$t_up" >"$work/t_up"; } ;;
    esac
  done
statuses=("${PIPESTATUS[@]}")
set -e
qemu_status=${statuses[0]}
t1=$(date +%s.%N)
touch "$console"

# --- summary ---------------------------------------------------------------
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
echo
echo "arm64/run-host: ---- summary ----"
if [ -s "$work/t_up" ]; then
  log "boot to /init: $(elapsed "$t0" "$(cat "$work/t_up")") s (guest clock: $(awk '/^ARM64-HOST-UP/ { print $2; exit }' "$console") s); whole run: $(elapsed "$t0" "$t1") s"
else
  log "the host never reached /init (whole run: $(elapsed "$t0" "$t1") s)"
fi
passed=0 failed=0 skipped=0
while read -r _ name verdict took; do
  printf 'arm64/run-host:   %-4s %-40s %8s s\n' "$verdict" "$name" "$took"
  case "$verdict" in
    PASS) passed=$((passed + 1)) ;;
    SKIP) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
done < <(grep -E '^ARM64-TEST [^ ]+ (PASS|FAIL|SKIP) ' "$console" || true)
# A test that started and never reported (the host died in it) fails too.
while read -r _ name; do
  if ! awk -v n="$name" '$1 == "ARM64-TEST" && $2 == n { found = 1 } END { exit !found }' "$console"; then
    log "  FAIL $name (started, never finished)"
    failed=$((failed + 1))
  fi
done < <(grep -E '^ARM64-TEST-START ' "$console" || true)

ok=1
if grep -q '^ARM64-HOST-NO-KVM' "$console"; then
  log "ERROR: the emulated host has no /dev/kvm: no test ran (is QEMU's virtualization=on working?)"
  ok=0
fi
if ! grep -q '^ARM64-HOST-END' "$console"; then
  case "$qemu_status" in
    124 | 137) log "ERROR: the host did not finish within ${timeout_s} s (--timeout)" ;;
    *) log "ERROR: the host stopped before the end of its tests (QEMU status $qemu_status; a panic?)" ;;
  esac
  ok=0
elif [ "$qemu_status" -ne 0 ]; then
  log "WARNING: QEMU exited with status $qemu_status after the last test"
fi
[ "$failed" -eq 0 ] || ok=0
echo "arm64: $passed passed, $failed failed, $skipped skipped"
[ "$ok" -eq 1 ]
