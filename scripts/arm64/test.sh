#!/usr/bin/env bash
# The arm64 tests: build them for aarch64 and run them inside the emulated
# ARM64 KVM host (QEMU TCG with EL2, Debian's arm64 kernel, /dev/kvm).
#
#   scripts/arm64/test.sh [run-host.sh options, e.g. --timeout 900]
#
# 1. setup.sh installs what is missing (status 3 when it cannot: passed on).
# 2. kvm-smoke.c, the project's own KVM/ARM check, built static.
# 3. The cargo tests for aarch64 (static, linked by aarch64-linux-gnu-gcc):
#    while trapline itself does not build for aarch64, every crate that
#    does has its tests run and the rest are listed as SKIPPED; once it
#    builds, every test executable of the workspace runs and a build
#    failure fails this script, and trapline is on the host's PATH (the
#    debug build the tests use; the release build with ARM64_RELEASE=1).
#    Each executable runs as `cargo test` would: from its package's folder,
#    the repository's tracked files present at the same absolute paths (so
#    env!("CARGO_MANIFEST_DIR") and env!("CARGO_BIN_EXE_trapline") hold),
#    and the cache's kernel, busybox and modules for the Linux tests; the
#    host loads its own vhost-net modules (tun, vhost_net) before them.
# 4. run-host.sh boots the host, runs them all, reports each by name.
#
# Exit status: 0 every test passed (or skipped); 1 a test or a build
# failed; 3 the emulated host cannot be installed here (callers skip).
# Environment: ARM64_CARGO=0 skips the cargo tests (kvm-smoke only).
#              ARM64_ONLY=REGEX runs only the tests whose name matches (an
#              extended regex, e.g. 'kvm-smoke|trapline/test/linux_arm64'),
#              for a developer who needs one test of the slow stage;
#              ARM64_TEST_ARGS='--nocapture' (or a test's name) is handed
#              to every cargo test executable;
#              ARM64_RELEASE=1 puts the release trapline on the host's
#              PATH (for measuring there) instead of the tests' debug one.
#              CI sets none of them.
set -euo pipefail
# shellcheck source=scripts/arm64/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

log() { echo "arm64/test: $*"; }
skipped() { log "WARNING: SKIPPED: $*"; }

status=0
scripts/arm64/setup.sh || status=$?
[ "$status" -eq 0 ] || exit "$status"

# The folder handed to run-host.sh (see its header): tests, files, rootfs/.
stage="$ARM64_CACHE/stage"
rm -rf "$stage"
mkdir -p "$stage"
tests="$stage/tests"
{
  echo "# Written by scripts/arm64/test.sh: NAME [timeout=S] COMMAND..."
} >"$tests"

# --- kvm-smoke ---------------------------------------------------------------
"$ARM64_CC" -static -O2 -Wall -Wextra -Werror -o "$stage/kvm-smoke" scripts/arm64/kvm-smoke.c
echo "kvm-smoke ./kvm-smoke" >>"$tests"

# --- the cargo tests -----------------------------------------------------------
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="$ARM64_CC"
# Static, as on x86 (.cargo/config.toml): the initramfs has no arm64 libc.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static"
build_log="$ARM64_CACHE/cargo-build.log"
artifacts="$ARM64_CACHE/cargo-artifacts.json"

# Puts FILE into the initramfs at its own absolute path, stripped: the
# emulated CPU unpacks the initramfs at about 10 MiB/s, and the debug info
# and symbols are most of a test executable (a panic still says where).
pack_at_own_path() {
  local dest="$stage/rootfs$1"
  mkdir -p "$(dirname "$dest")"
  "$ARM64_STRIP" --strip-all -o "$dest" "$1"
}

# One `kind/name` per test executable in cargo's JSON messages (stdin):
# prints "EXECUTABLE MANIFEST_DIR KIND NAME" lines.
test_executables() {
  grep -E '"reason":"compiler-artifact"' |
    grep -E '"profile":\{[^}]*"test":true\}' |
    sed -nE 's/.*"manifest_path":"([^"]*)\/Cargo\.toml".*"target":\{"kind":\["([^"]+)"[^]]*\][^}]*"name":"([^"]+)".*"executable":"([^"]+)".*/\4 \1 \2 \3/p'
}
# How many test executables cargo reported, parsed or not (a check on the
# sed above, which relies on the order of cargo's JSON fields).
test_executable_count() {
  grep -E '"reason":"compiler-artifact"' | grep -E '"profile":\{[^}]*"test":true\}' | grep -cE '"executable":"' || true
}

run_cargo_tests=1
if [ "${ARM64_CARGO:-1}" = 0 ]; then
  skipped "the cargo tests (ARM64_CARGO=0)"
  run_cargo_tests=0
elif ! rustup target list --installed 2>/dev/null | grep -qx "$ARM64_RUST_TARGET"; then
  skipped "the cargo tests: the Rust target $ARM64_RUST_TARGET is not installed (rustup target add $ARM64_RUST_TARGET)"
  run_cargo_tests=0
fi

if [ "$run_cargo_tests" = 1 ]; then
  trapline_builds=0
  log "cargo build --target $ARM64_RUST_TARGET (does trapline build for aarch64?)"
  if nice cargo build --target "$ARM64_RUST_TARGET" >"$build_log" 2>&1; then
    trapline_builds=1
  else
    skipped "trapline does NOT build for aarch64 yet: its own tests and the release trapline are not run (first errors below; whole log: $build_log)"
    grep -E '^error' "$build_log" | head -n 5 | sed 's/^/arm64\/test:   /'
  fi

  # Every test executable; --keep-going builds all the crates that can be.
  log "building the test executables (cargo build --tests --workspace)"
  cargo_status=0
  nice cargo build --target "$ARM64_RUST_TARGET" --workspace --tests --keep-going \
    --message-format=json >"$artifacts" 2>"$build_log" || cargo_status=$?
  if [ "$cargo_status" -ne 0 ]; then
    # shellcheck disable=SC2016 # the backquotes are cargo's, not a command
    failing=$(sed -nE 's/^error: could not compile `([^`]+)`.*/\1/p' "$build_log" | sort -u | tr '\n' ' ')
    if [ "$trapline_builds" = 1 ]; then
      log "ERROR: the test executables do not build for aarch64 (${failing:-see $build_log}):" >&2
      grep -E '^error' "$build_log" | head -n 10 >&2
      exit 1
    fi
    skipped "the tests of the crates that do not build for aarch64 yet: ${failing:-see $build_log}"
  fi

  count=0
  while read -r exe dir kind name; do
    case "$kind" in
      lib) test_name="${dir##*/}/lib" ;;
      *) test_name="${dir##*/}/$kind/$name" ;;
    esac
    count=$((count + 1))
    # ARM64_ONLY: the others are neither packed nor listed.
    if [ -n "${ARM64_ONLY:-}" ] && ! [[ "$test_name" =~ ^(${ARM64_ONLY})$ ]]; then continue; fi
    pack_at_own_path "$exe"
    # As `cargo test` runs it: from the package's folder, with its variables.
    # TRAPLINE_ARM64_CACHE: where the Linux guest's files are (below).
    echo "$test_name cd $dir && CARGO_MANIFEST_DIR=$dir TRAPLINE_ARM64_CACHE=$ARM64_CACHE exec $exe ${ARM64_TEST_ARGS:-}" >>"$tests"
  done < <(test_executables <"$artifacts")
  log "$count cargo test executables"
  reported=$(test_executable_count <"$artifacts")
  if [ "$count" -ne "$reported" ]; then
    log "ERROR: cargo reported $reported test executables and $count were understood: test_executables() needs fixing" >&2
    exit 1
  fi

  if [ "$count" -gt 0 ]; then
    # The repository's tracked files at their own paths: the sources, test
    # data and docs the tests read through CARGO_MANIFEST_DIR (a few MiB).
    if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
      mkdir -p "$stage/rootfs$ROOT"
      git -C "$ROOT" ls-files -z | tar -C "$ROOT" --null -T - -cf - | tar -C "$stage/rootfs$ROOT" -xf -
      # A check by name that the host sees the repository where the tests look
      # for it (a clone under /tmp once had it hidden by init's tmpfs).
      echo "repository-at-its-path test -f $ROOT/Cargo.toml" >>"$tests"
    else
      log "WARNING: $ROOT is not a git checkout: tests that read the repository's files will fail"
    fi
  fi

  if [ "$trapline_builds" = 1 ]; then
    # The binaries the integration tests run (env!("CARGO_BIN_EXE_trapline"),
    # env!("CARGO_BIN_EXE_trapline-start-floor")).
    for bin in trapline trapline-start-floor; do
      debug_bin="$ROOT/target/$ARM64_RUST_TARGET/debug/$bin"
      if [ -x "$debug_bin" ]; then pack_at_own_path "$debug_bin"; fi
    done
    if [ "${ARM64_RELEASE:-0}" = 1 ]; then
      log "cargo build --release --target $ARM64_RUST_TARGET (the release trapline and, beside it, the start-up floor)"
      nice cargo build --release --target "$ARM64_RUST_TARGET" --bin trapline --bin trapline-start-floor >"$build_log" 2>&1 ||
        { log "ERROR: the release trapline does not build for aarch64 (see $build_log)" >&2; tail -n 20 "$build_log" >&2; exit 1; }
      for bin in trapline trapline-start-floor; do
        "$ARM64_STRIP" --strip-all -o "$stage/$bin" "target/$ARM64_RUST_TARGET/release/$bin"
      done
    else
      # The tests' own (debug) binaries on PATH: a fat-LTO release build for
      # aarch64 costs CI minutes and no test needs its speed under TCG.
      for bin in trapline trapline-start-floor; do
        ln -s "$ROOT/target/$ARM64_RUST_TARGET/debug/$bin" "$stage/$bin"
      done
    fi
    # The Linux guest of crates/cli/tests/linux_arm64.rs and virtio_blk.rs,
    # at the same paths as here: the host's own kernel (uncompressed, as
    # Debian ships it: 32 MiB, about 3 s of the host's unpacking), busybox
    # and the modules for its initramfs (the tests write that themselves).
    mkdir -p "$stage/rootfs$ARM64_CACHE"
    cp -r "$ARM64_KERNEL" "$ARM64_BUSYBOX" "$ARM64_GUEST_MODULES_DIR" "$stage/rootfs$ARM64_CACHE/"
    # The host's own modules for vhost-net (tun, vhost, vhost_net and what
    # they need), loaded by init.sh before the tests.
    cp -r "$ARM64_HOST_MODULES_DIR" "$stage/modules"
    echo "trapline-version trapline --version" >>"$tests"
  fi
fi

# --- QEMU inside the host (the lab's --peer qemu there) -------------------------
# Debian's arm64 qemu-system-aarch64 and its libraries (setup.sh), at
# $ARM64_PEER_QEMU_ROOT, run through its own dynamic loader by a wrapper on
# PATH (the host has no libc of its own). Without it the test skips.
if [ -x "$ARM64_PEER_QEMU_DIR/bin/$ARM64_QEMU" ]; then
  mkdir -p "$stage/rootfs$ARM64_PEER_QEMU_ROOT" "$stage/rootfs/usr/bin"
  cp -r "$ARM64_PEER_QEMU_DIR/bin" "$ARM64_PEER_QEMU_DIR/lib" "$stage/rootfs$ARM64_PEER_QEMU_ROOT/"
  cat >"$stage/rootfs/usr/bin/$ARM64_QEMU" <<WRAPPER
#!/bin/sh
exec $ARM64_PEER_QEMU_ROOT/lib/ld-linux-aarch64.so.1 --library-path $ARM64_PEER_QEMU_ROOT/lib $ARM64_PEER_QEMU_ROOT/bin/$ARM64_QEMU "\$@"
WRAPPER
  chmod 0755 "$stage/rootfs/usr/bin/$ARM64_QEMU"
else
  skipped "QEMU inside the emulated host: setup.sh could not unpack it (the --peer qemu test skips)"
fi

# --- run them all in the emulated host ---------------------------------------
if [ -n "${ARM64_ONLY:-}" ]; then
  grep -E "^#|^(${ARM64_ONLY}) " "$tests" >"$tests.only" || true
  mv "$tests.only" "$tests"
  skipped "every test but those matching ARM64_ONLY='$ARM64_ONLY': $(grep -cv '^#' "$tests") left"
fi
exec scripts/arm64/run-host.sh "$@" "$stage"
