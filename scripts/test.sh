#!/usr/bin/env bash
# Every test trapline has. Run from anywhere; CI runs exactly this (.ci/run).
# Needs: a Rust toolchain (cargo), gcc and binutils (guest payloads are C and
# assembly built by crates/guest/build.rs). Tests that need /dev/kvm skip,
# loudly, when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -e /dev/kvm ]; then
  echo "test.sh: /dev/kvm is present: KVM tests will run"
else
  echo "test.sh: WARNING: /dev/kvm is ABSENT: every KVM test will be SKIPPED (look for 'SKIPPED' below)"
fi

for tool in cargo gcc ld objcopy; do
  command -v "$tool" >/dev/null || { echo "test.sh: $tool not found: install a Rust toolchain, gcc and binutils" >&2; exit 2; }
done

# The HTML report's browser test (crates/report/tests/browser.rs) renders
# the report in headless Chromium and skips, loudly, without one. CI starts
# from a bare machine, so install Debian's chromium when it is missing and
# apt-get is here (the package lists are refreshed only if a plain install
# fails). A failed install is a warning, not an error: the test then skips.
ensure_chromium() {
  local b log
  for b in chromium chromium-browser google-chrome; do
    command -v "$b" >/dev/null && return 0
  done
  if ! command -v apt-get >/dev/null; then
    echo "test.sh: WARNING: chromium is ABSENT and there is no apt-get: the browser test will be SKIPPED"
    return 0
  fi
  echo "test.sh: installing chromium (apt-get) for the browser test"
  log=$(mktemp)
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>"$log"; then
    if ! { apt-get update -qq >/dev/null 2>>"$log" &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>>"$log"; }; then
      echo "test.sh: WARNING: could not install chromium: the browser test will be SKIPPED" >&2
      tail -n 5 "$log" >&2
    fi
  fi
  rm -f "$log"
}
ensure_chromium

cargo test --workspace --all-targets -- --test-threads=2
