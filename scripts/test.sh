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

cargo test --workspace --all-targets -- --test-threads=2
