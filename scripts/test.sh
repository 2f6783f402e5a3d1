#!/usr/bin/env bash
# Every test trapline has. Run from anywhere; CI runs exactly this (.ci/run).
# Needs: a Rust toolchain (cargo), gcc and binutils (guest payloads are C and
# assembly built by crates/guest/build.rs); the arm64 cross gcc and C library
# are installed with apt-get when missing. Tests that need /dev/kvm skip,
# loudly, when it is absent. The last stage runs the arm64 tests in an
# emulated ARM64 KVM host (scripts/arm64/test.sh, docs/arm64.md).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage's start, in seconds since this script began: CI has a budget.
test_sh_start=$(date +%s)
stage() { echo "test.sh: [$(($(date +%s) - test_sh_start)) s] $*"; }

if [ -e /dev/kvm ]; then
  echo "test.sh: /dev/kvm is present: KVM tests will run"
else
  echo "test.sh: WARNING: /dev/kvm is ABSENT: every KVM test will be SKIPPED (look for 'SKIPPED' below)"
fi

# The Linux boot and virtio tests boot the shared tiny Linux from
# ../shared/guests/linux beside the repository (or TRAPLINE_LINUX_DIR); the
# test harness hides a passing test's output, so say here when they will skip.
linux_dir="${TRAPLINE_LINUX_DIR:-$(cd .. && pwd)/shared/guests/linux}"
if [ -e "$linux_dir/vmlinux.xz" ]; then
  echo "test.sh: the shared Linux kernel is in $linux_dir: the Linux boot tests will run"
else
  echo "test.sh: WARNING: no vmlinux.xz in $linux_dir (set TRAPLINE_LINUX_DIR): the Linux boot and Linux virtio tests will be SKIPPED"
fi

for tool in cargo gcc ld objcopy; do
  command -v "$tool" >/dev/null || { echo "test.sh: $tool not found: install a Rust toolchain, gcc and binutils" >&2; exit 2; }
done

# Two tests need programs a bare machine lacks, and skip, loudly, without
# them: the HTML report's browser test (crates/report/tests/browser.rs,
# headless Chromium), the QEMU comparisons (`trapline bench --peer qemu`,
# crates/cli/tests/{peer,kut_compat}.rs) and xz for the Linux boot tests
# (crates/cli/tests/linux.rs). CI starts from a bare machine, so
# install Debian's packages when they are missing and apt-get is here (the
# package lists are refreshed only if a plain install fails). A failed
# install is a warning, not an error: those tests then skip.
# A name starting with / is a file the package installs, checked with -e
# (for packages that bring no program).
present() { # present NAME...: one of the programs or files is here
  local b
  for b in "$@"; do
    case "$b" in
      /*) [ -e "$b" ] && return 0 ;;
      *) command -v "$b" >/dev/null && return 0 ;;
    esac
  done
  return 1
}
install_package() { # install_package PACKAGE WHAT: apt-get, quietly; non-zero if it failed
  local pkg=$1 what=$2 log rc=0
  echo "test.sh: installing $pkg (apt-get) for $what"
  log=$(mktemp)
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null 2>"$log"; then
    if ! { apt-get update -qq >/dev/null 2>>"$log" &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null 2>>"$log"; }; then
      tail -n 5 "$log" >&2
      rc=1
    fi
  fi
  rm -f "$log"
  return "$rc"
}
ensure_package() { # ensure_package PACKAGE WHAT BINARY...
  local pkg=$1 what=$2
  shift 2
  present "$@" && return 0
  if ! command -v apt-get >/dev/null; then
    echo "test.sh: WARNING: $pkg is ABSENT and there is no apt-get: $what will be SKIPPED"
    return 0
  fi
  install_package "$pkg" "$what" ||
    echo "test.sh: WARNING: could not install $pkg: $what will be SKIPPED" >&2
}
# The same for what the build itself needs: still missing is an error.
require_package() { # require_package PACKAGE WHAT BINARY...
  local pkg=$1 what=$2
  shift 2
  present "$@" && return 0
  command -v apt-get >/dev/null && install_package "$pkg" "$what" && present "$@" && return 0
  echo "test.sh: $pkg is missing and could not be installed: $what cannot be built (apt-get install $pkg)" >&2
  exit 2
}
ensure_package chromium "the browser test" chromium chromium-browser google-chrome
ensure_package qemu-system-x86 "the QEMU comparisons" qemu-system-x86_64
ensure_package xz-utils "the Linux boot tests (vmlinux.xz)" xz
# Every cargo stage below builds the arm64 guest payloads too (crates/guest,
# feature aarch64-payloads) and the arm64 stage links static arm64 test
# executables: the cross compiler and the arm64 C library, before the first
# cargo build (scripts/arm64/setup.sh, which installs them too, runs last).
require_package gcc-aarch64-linux-gnu "the arm64 guest payloads" aarch64-linux-gnu-gcc
require_package libc6-dev-arm64-cross "the static arm64 test executables" /usr/aarch64-linux-gnu/lib/libc.a

# Dependencies a crate declares and never uses (cargo-machete, pinned,
# installed here the first time: a minute or two). Its finds are only a
# warning: it reads sources, not the compiler's view, so it can be wrong
# (silence a false positive in that crate's [package.metadata.cargo-machete]).
stage "unused dependencies (cargo-machete)"
CARGO_MACHETE_VERSION=0.9.2
if ! command -v cargo-machete >/dev/null; then
  echo "test.sh: installing cargo-machete $CARGO_MACHETE_VERSION (takes a minute or two)"
  cargo install cargo-machete --version "$CARGO_MACHETE_VERSION" --locked >/dev/null 2>&1 ||
    echo "test.sh: WARNING: could not install cargo-machete" >&2
fi
if command -v cargo-machete >/dev/null; then
  machete_log=$(mktemp)
  if cargo machete --skip-target-dir >"$machete_log" 2>&1; then
    echo "test.sh: cargo-machete: no unused dependencies"
  else
    echo "test.sh: WARNING: cargo-machete reports unused dependencies (or failed); remove them from the Cargo.toml it names:" >&2
    # The crates and dependencies, not the advice that follows them.
    grep -v '^Analyzing' "$machete_log" | sed '/^$/q' >&2 || true
  fi
  rm -f "$machete_log"
else
  echo "test.sh: WARNING: cargo-machete is ABSENT: unused dependencies were NOT checked (cargo install cargo-machete --locked)"
fi

# A few seconds of every fuzz target (fuzz/, cargo-fuzz on the nightly
# toolchain the machine has): a crash fails the run. Installing cargo-fuzz
# the first time takes a couple of minutes; if it cannot be installed at
# all (status 3), the smoke run is skipped, loudly. Longer campaigns:
# FUZZ_SECONDS=600 scripts/fuzz-smoke.sh (see fuzz/README.md).
stage "the fuzz smoke run"
fuzz_status=0
FUZZ_SECONDS="${FUZZ_SECONDS:-3}" scripts/fuzz-smoke.sh || fuzz_status=$?
case "$fuzz_status" in
  0) ;;
  3) echo "test.sh: WARNING: cargo-fuzz could not be installed: the fuzz smoke run was SKIPPED" ;;
  *) echo "test.sh: the fuzz smoke run failed (status $fuzz_status)" >&2; exit "$fuzz_status" ;;
esac

# The API documentation builds without a broken or ambiguous link.
stage "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

# The shape of the code (docs/architecture.md#where-x86-ends-and-arm64-begins):
# no architecture named outside arch/ modules beyond its budget, and clippy
# (warnings as errors, functions over 100 lines among them) on both targets.
stage "the shape of the code (scripts/check-structure.sh)"
scripts/check-structure.sh

# `trapline run` and `trapline report` build without the lab's measuring
# code (the default `bench` feature brings the lab, the raw-KVM floor and
# the peers), and the report crate links neither the machine nor KVM.
stage "trapline without the lab (--no-default-features)"
cargo check -p trapline --no-default-features --quiet
without_lab=$(cargo tree -p trapline --no-default-features -e normal --prefix none)
if grep -qE '^trapline-(lab|floor|peers) ' <<<"$without_lab"; then
  echo "test.sh: trapline --no-default-features still depends on the lab, the floor or the peers" >&2
  exit 1
fi
if cargo tree -p trapline-report -e normal --prefix none | grep -qE '^trapline-(machine|kvm) '; then
  echo "test.sh: trapline-report depends on trapline-machine or trapline-kvm: trapline report must build without them" >&2
  exit 1
fi

# --no-fail-fast: one run reports every failing test executable, not the
# first. Each executable runs under scripts/timed-test.sh (cargo's runner for
# this host's target), and the slowest are listed after: CI has a budget.
stage "cargo test --workspace"
host_triple=$(rustc -vV | sed -n 's/^host: //p')
runner_var="CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$host_triple")_RUNNER"
export TRAPLINE_TEST_TIMES
TRAPLINE_TEST_TIMES=$(mktemp)
test_status=0
env "$runner_var=$PWD/scripts/timed-test.sh" \
  cargo test --workspace --all-targets --no-fail-fast -- --test-threads=2 || test_status=$?
stage "the slowest test executables (seconds):"
sort -rn "$TRAPLINE_TEST_TIMES" | head -n 12
rm -f "$TRAPLINE_TEST_TIMES"
[ "$test_status" -eq 0 ] || { echo "test.sh: cargo test failed (status $test_status)" >&2; exit "$test_status"; }

# The arm64 stage, last: trapline's arm64 tests inside an emulated ARM64 KVM
# host (QEMU TCG with EL2 booting Debian's arm64 kernel; docs/arm64.md).
# It installs what it needs the first time (under a minute); it is skipped,
# loudly, only when the emulator cannot be installed here (status 3); any
# arm64 test failing fails this script.
stage "the arm64 stage (scripts/arm64/test.sh)"
arm64_start=$(date +%s)
arm64_status=0
scripts/arm64/test.sh || arm64_status=$?
arm64_seconds=$(($(date +%s) - arm64_start))
case "$arm64_status" in
  0) stage "the arm64 stage passed (wall time ${arm64_seconds} s)" ;;
  3) echo "test.sh: WARNING: the emulated ARM64 host could not be installed: the arm64 stage was SKIPPED (wall time ${arm64_seconds} s)" ;;
  *) echo "test.sh: the arm64 stage FAILED with status $arm64_status (wall time ${arm64_seconds} s)" >&2; exit "$arm64_status" ;;
esac
