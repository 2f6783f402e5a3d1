#!/usr/bin/env bash
# The shape of the code, kept (docs/architecture.md#where-x86-ends-and-arm64-begins):
#
# 1. Architecture-specific Rust lives under `arch/{x86_64,aarch64}` modules
#    exporting the same names; a shared file names an architecture only to
#    choose its arch module (`#[cfg(target_arch = …)] mod x86_64;` and the
#    re-export beside it). Every other `cfg(target_arch)` outside an arch/
#    folder is counted, and the count may not grow past ARCH_CFG_BUDGET.
# 2. clippy, warnings as errors, on both targets: the workspace's lints
#    include clippy::too_many_lines over 100 lines (clippy.toml), so a long
#    function is split or carries an `#[expect]` that says why.
#
#   scripts/check-structure.sh [--no-clippy]
#
# Exit status: 0 the shape holds; 1 it does not (what and where printed).
set -euo pipefail
cd "$(dirname "$0")/.."

ARCH_CFG_BUDGET=3

# Source files of the workspace's crates, not their tests: `tests/` folders,
# and whole files that are only a `#[cfg(test)]` module are still source,
# but a test may pick its architecture freely.
arch_cfg_lines() {
  local f
  for f in $(grep -rl --include='*.rs' -E 'cfg\(.*target_arch' crates/*/src | grep -v '/arch/' || true); do
    # A cfg that picks an arch module (`mod x86_64;`, `pub use arch::…`,
    # `#[path = …]`), on its own line or the next, is the one allowed use.
    awk -v f="$f" '
      /cfg\(.*target_arch/ { held = FNR ": " $0; pick = ($0 ~ /(mod|use) +(self::)?(arch|x86_64|aarch64)([^a-z_0-9]|$)/); if (!pick) { pending = 1 }; next }
      pending { if ($0 !~ /^[[:space:]]*((pub(\([a-z]+\))? +)?(mod|use) +(self::)?(arch|x86_64|aarch64)([^a-z_0-9]|$)|#\[path)/) print f ":" held; pending = 0 }
      END { if (pending) print f ":" held }
    ' "$f"
  done
}

status=0
lines=$(arch_cfg_lines)
count=$(printf '%s' "$lines" | grep -c . || true)
if [ "$count" -gt "$ARCH_CFG_BUDGET" ]; then
  echo "check-structure: $count cfg(target_arch) lines outside arch/ modules (budget $ARCH_CFG_BUDGET):" >&2
  printf '%s\n' "$lines" >&2
  echo "check-structure: move the architecture's code into its crate's arch/{x86_64,aarch64} module" >&2
  status=1
else
  echo "check-structure: $count cfg(target_arch) lines outside arch/ modules (budget $ARCH_CFG_BUDGET)"
fi

if [ "${1:-}" != "--no-clippy" ]; then
  for target in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu; do
    echo "check-structure: cargo clippy --target $target (warnings are errors)"
    if ! cargo clippy --quiet --workspace --all-targets --target "$target" -- -D warnings; then
      echo "check-structure: clippy failed for $target" >&2
      status=1
    fi
  done
fi
exit "$status"
