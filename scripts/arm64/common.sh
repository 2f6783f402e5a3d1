# shellcheck shell=bash disable=SC2034 # the names are for the scripts that source this
# What the scripts in scripts/arm64/ share: where things are and what they
# are called. Sourced, never run. Sets ROOT (the repository) and the ARM64_*
# names below; the caller has already said `set -euo pipefail`.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The cache of the emulated host's pieces (git-ignored under target/; reused
# while present; delete it to fetch the newest kernel again).
ARM64_CACHE="${TRAPLINE_ARM64_CACHE:-$ROOT/target/arm64-host}"
# Debian's arm64 kernel (KVM built in), its package's name, and a static
# busybox for the initramfs: unpacked from the arm64 .debs by setup.sh.
ARM64_KERNEL="$ARM64_CACHE/vmlinuz"
ARM64_KERNEL_PACKAGE_FILE="$ARM64_CACHE/kernel-package"
ARM64_BUSYBOX="$ARM64_CACHE/busybox"
# The same kernel as a GUEST of trapline (crates/cli/tests/linux_arm64.rs):
# the modules its initramfs loads, unpacked from the kernel's package with
# what they depend on, and `order` naming their files in loading order
# (dependencies first). Debian builds virtio and its ring in; virtio_net
# brings net_failover and failover.
ARM64_GUEST_MODULES="virtio_mmio virtio_blk virtio_net"
ARM64_GUEST_MODULES_DIR="$ARM64_CACHE/modules"
# The same kernel as the emulated HOST: the modules its init loads before
# the tests (init.sh), for vhost-net (/dev/vhost-net and the TAP it needs,
# /dev/net/tun); test.sh packs them as the test folder's modules/.
ARM64_HOST_MODULES="tun vhost_net"
ARM64_HOST_MODULES_DIR="$ARM64_CACHE/host-modules"

# QEMU for the emulated host itself (qemu-system-aarch64 -accel kvm there,
# the lab's `--peer qemu`): Debian's arm64 qemu-system-arm, unpacked by
# setup.sh with the shared libraries its binary needs (and nothing else: no
# firmware, no data files; -kernel needs none) into this folder: bin/ and
# lib/ (with the dynamic loader). test.sh lays it into the host at
# ARM64_PEER_QEMU_ROOT, with a wrapper as ARM64_QEMU on PATH there.
ARM64_PEER_QEMU_DIR="$ARM64_CACHE/peer-qemu"
ARM64_PEER_QEMU_ROOT=/opt/qemu-arm64

ARM64_RUST_TARGET=aarch64-unknown-linux-gnu
ARM64_CC=aarch64-linux-gnu-gcc
ARM64_STRIP=aarch64-linux-gnu-strip
ARM64_READELF=aarch64-linux-gnu-readelf
# Where Debian's cross packages put the arm64 glibc and kernel headers.
ARM64_SYSROOT=/usr/aarch64-linux-gnu
ARM64_QEMU=qemu-system-aarch64

# The exit status of setup.sh (and test.sh) when the emulated host cannot be
# installed here: callers skip, loudly, instead of failing.
ARM64_UNAVAILABLE=3
