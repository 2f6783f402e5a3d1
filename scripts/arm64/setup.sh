#!/usr/bin/env bash
# Install what the emulated ARM64 KVM host needs, once; later runs only check.
#
#   scripts/arm64/setup.sh
#
# - Debian packages: qemu-system-arm (QEMU TCG emulates an arm64 machine with
#   EL2, so its kernel offers /dev/kvm), gcc-aarch64-linux-gnu and
#   libc6-dev-arm64-cross (the cross compiler and linker, a static arm64
#   glibc and the kernel's arm64 headers), cpio (the initramfs).
# - Debian's arm64 kernel image (the package linux-image-arm64:arm64 depends
#   on; KVM is built in) and busybox-static:arm64, downloaded as .debs (this
#   adds the foreign architecture arm64 to dpkg once) and unpacked into
#   $TRAPLINE_ARM64_CACHE (default target/arm64-host/), reused while present;
#   from the same kernel package, the modules Linux needs as trapline's
#   guest for a virtio-blk disk and a virtio-net card (common.sh:
#   ARM64_GUEST_MODULES) and those the emulated host loads for vhost-net
#   (ARM64_HOST_MODULES); a cache whose module lists differ is unpacked again.
# - The Rust target aarch64-unknown-linux-gnu (rustup). Without it only the
#   cargo tests are skipped (test.sh says so), so its failure is a warning.
#
# Exit status: 0 ready; 3 the emulator or its pieces could not be installed
# (callers skip the arm64 tests, loudly); anything else is a bug.
set -euo pipefail
# shellcheck source=scripts/arm64/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

log() { echo "arm64/setup: $*"; }
unavailable() {
  {
    echo "arm64/setup: ******************************************************"
    echo "arm64/setup: THE EMULATED ARM64 HOST CANNOT BE INSTALLED: $*"
    echo "arm64/setup: ******************************************************"
  } >&2
  exit "$ARM64_UNAVAILABLE"
}

apt_log=$(mktemp)
work=""
cleanup() { rm -rf "$apt_log" ${work:+"$work"}; }
trap cleanup EXIT

# apt-get with a wait on the dpkg lock (other jobs may be installing too).
apt_quiet() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -qq "$@" >>"$apt_log" 2>&1; }
apt_update() { log "apt-get update"; apt_quiet update; }
# Install PACKAGE...; the lists are refreshed only when a plain install fails.
apt_install() {
  log "installing $* (apt-get)"
  apt_quiet install -y --no-install-recommends "$@" ||
    { apt_update && apt_quiet install -y --no-install-recommends "$@"; }
}
apt_failed() {
  tail -n 8 "$apt_log" >&2
  unavailable "$*"
}

if ! command -v apt-get >/dev/null; then
  missing=""
  for tool in "$ARM64_QEMU" "$ARM64_CC" cpio; do command -v "$tool" >/dev/null || missing="$missing $tool"; done
  if [ -n "$missing" ] || [ ! -s "$ARM64_KERNEL" ] || [ ! -x "$ARM64_BUSYBOX" ]; then
    unavailable "there is no apt-get to install what is missing:${missing:- the arm64 kernel and busybox}"
  fi
fi

# --- host packages -----------------------------------------------------------
packages=()
command -v "$ARM64_QEMU" >/dev/null || packages+=(qemu-system-arm)
command -v "$ARM64_CC" >/dev/null || packages+=(gcc-aarch64-linux-gnu)
# The static arm64 glibc and the kernel's headers (only recommended by the
# compiler's package, and recommendations are not installed here).
[ -e "$ARM64_SYSROOT/lib/libc.a" ] && [ -e "$ARM64_SYSROOT/include/linux/kvm.h" ] ||
  packages+=(libc6-dev-arm64-cross)
command -v cpio >/dev/null || packages+=(cpio)
if [ "${#packages[@]}" -gt 0 ]; then
  apt_install "${packages[@]}" || apt_failed "apt-get could not install ${packages[*]}"
fi
"$ARM64_QEMU" -machine help 2>/dev/null | grep -q '^virt ' ||
  unavailable "$ARM64_QEMU has no 'virt' machine"

# --- Debian's arm64 kernel and busybox ---------------------------------------
# The package that linux-image-arm64:arm64 depends on, e.g.
# linux-image-6.1.0-41-arm64 (empty when apt does not know it yet).
kernel_package() {
  apt-cache depends linux-image-arm64:arm64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\)\(:arm64\)\?$/\1/p' | head -n 1
}

# Unpacks the modules NAMES (and, recursively, what their `depends=` names)
# from the kernel package DEB into DIR, uncompressed, lists their files in
# DIR/order, dependencies first, and NAMES in DIR/wanted (to see later that
# the lists changed). A module the kernel has built in (modules.builtin)
# needs no file; a missing one is a warning (the Linux tests then fail
# saying there is no /dev/vda or eth0, the vhost-net test that there is no
# /dev/vhost-net).
unpack_modules() {
  local deb=$1 dir=$2 names=$3 files builtin name
  files=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -E '^\./lib/modules/.*\.ko(\.xz)?$' || true)
  builtin=$(dpkg-deb --fsys-tarfile "$deb" | tar -x -O --wildcards './lib/modules/*/modules.builtin' 2>/dev/null || true)
  rm -rf "$dir"
  mkdir -p "$dir"
  : >"$dir/order"
  local seen=" "
  add_module() {
    local name=${1//-/_} pattern path file dep
    case "$seen" in *" $name "*) return 0 ;; esac
    seen="$seen$name "
    pattern="/${name//_/[-_]}\.ko(\.xz)?\$"
    path=$(printf '%s\n' "$files" | grep -E "$pattern" | head -n 1 || true)
    if [ -z "$path" ]; then
      printf '%s\n' "$builtin" | grep -qE "/${name//_/[-_]}\.ko\$" ||
        log "WARNING: the kernel package has no module $name, built in or not"
      return 0
    fi
    file=${path##*/}
    dpkg-deb --fsys-tarfile "$deb" | tar -x -O "$path" >"$dir/$file"
    case "$file" in *.xz) xz -d "$dir/$file" && file=${file%.xz} ;; esac
    for dep in $(tr '\0' '\n' <"$dir/$file" | sed -n 's/^depends=//p' | tr ',' ' '); do
      add_module "$dep"
    done
    echo "$file" >>"$dir/order"
  }
  for name in $names; do add_module "$name"; done
  echo "$names" >"$dir/wanted"
}

# dpkg's foreign architecture arm64, once (for apt-get download of arm64 .debs).
add_arm64_architecture() {
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    log "adding the foreign architecture arm64 to dpkg (for apt-get download)"
    dpkg --add-architecture arm64
    apt_update || apt_failed "apt-get update failed after adding arm64"
  fi
}

# Whether DIR holds the modules NAMES (unpacked by this script's lists).
modules_current() { [ -f "$1/order" ] && [ "$(cat "$1/wanted" 2>/dev/null)" = "$2" ]; }

if [ -s "$ARM64_KERNEL" ] && [ -x "$ARM64_BUSYBOX" ] &&
  modules_current "$ARM64_GUEST_MODULES_DIR" "$ARM64_GUEST_MODULES" &&
  modules_current "$ARM64_HOST_MODULES_DIR" "$ARM64_HOST_MODULES"; then
  log "reusing the kernel ($(cat "$ARM64_KERNEL_PACKAGE_FILE" 2>/dev/null || echo '?')), its modules and busybox in $ARM64_CACHE"
else
  add_arm64_architecture
  pkg=$(kernel_package)
  if [ -z "$pkg" ]; then
    apt_update || apt_failed "apt-get update failed"
    pkg=$(kernel_package)
  fi
  [ -n "$pkg" ] || unavailable "apt knows no linux-image-arm64:arm64 (apt-cache depends found no kernel package)"

  work=$(mktemp -d)
  # Downloaded as root into a private folder: no _apt sandbox user needed.
  download() {
    log "downloading $pkg:arm64 and busybox-static:arm64"
    (cd "$work" && apt_quiet -o APT::Sandbox::User=root download "$pkg:arm64" busybox-static:arm64)
  }
  # Stale lists name a kernel the archive no longer has: refresh, once.
  if ! download; then
    apt_update || apt_failed "apt-get update failed"
    pkg=$(kernel_package)
    if [ -z "$pkg" ] || ! download; then
      apt_failed "apt-get download of ${pkg:-the kernel}:arm64 busybox-static:arm64 failed"
    fi
  fi
  # Only the files needed, not the kernel's other modules.
  dpkg-deb --fsys-tarfile "$work/${pkg}_"*.deb | tar -x -C "$work" --wildcards './boot/vmlinuz-*'
  dpkg-deb --fsys-tarfile "$work/busybox-static_"*.deb | tar -x -C "$work" ./bin/busybox
  mkdir -p "$ARM64_CACHE"
  for set in "$ARM64_GUEST_MODULES_DIR:$ARM64_GUEST_MODULES" "$ARM64_HOST_MODULES_DIR:$ARM64_HOST_MODULES"; do
    unpack_modules "$(echo "$work/${pkg}_"*.deb)" "${set%%:*}.tmp" "${set#*:}"
    rm -rf "${set%%:*}"
    mv "${set%%:*}.tmp" "${set%%:*}"
  done
  # shellcheck disable=SC2012 # one file, a name we made
  install -m 0644 "$(ls "$work"/boot/vmlinuz-* | head -n 1)" "$ARM64_KERNEL.tmp"
  install -m 0755 "$work/bin/busybox" "$ARM64_BUSYBOX.tmp"
  echo "$pkg" >"$ARM64_KERNEL_PACKAGE_FILE"
  mv "$ARM64_BUSYBOX.tmp" "$ARM64_BUSYBOX"
  mv "$ARM64_KERNEL.tmp" "$ARM64_KERNEL"
  log "unpacked $pkg, its guest modules $(tr '\n' ' ' <"$ARM64_GUEST_MODULES_DIR/order")and host modules $(tr '\n' ' ' <"$ARM64_HOST_MODULES_DIR/order")and busybox into $ARM64_CACHE"
fi

# --- QEMU for the emulated host (the lab's --peer qemu there) -----------------
# Debian's arm64 qemu-system-arm and the library packages it depends on
# (recursively, lib* and zlib1g only: debconf, adduser and qemu-system-data's
# firmware are not needed to run the binary with -kernel), downloaded as
# .debs and unpacked into a scratch folder; only qemu-system-aarch64 and the
# shared objects its ELF needs (DT_NEEDED, transitively, and the dynamic
# loader) are kept, in $ARM64_PEER_QEMU_DIR/{bin,lib}. Optional: without it
# the --peer qemu test in the host skips, so a failure is a warning.

# The library packages PACKAGE:arm64 depends on (one a line, no suffix).
library_depends() {
  apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "$1:arm64" 2>/dev/null |
    sed -n 's/^ *|\{0,1\}\(Pre\)\{0,1\}Depends: \(lib[^:<> ]*\|zlib1g\)\(:arm64\)\{0,1\}$/\2/p' | sort -u
}

# Copies the shared objects ELF (under ROOT) needs, transitively, into LIB.
copy_needed() {
  local root=$1 elf=$2 lib=$3 name path
  for name in $("$ARM64_READELF" -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
    [ -e "$lib/$name" ] && continue
    path=""
    for d in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu lib usr/lib; do
      if [ -e "$root/$d/$name" ]; then path="$root/$d/$name"; break; fi
    done
    [ -n "$path" ] || { log "WARNING: $name (needed by ${elf##*/}) is in none of the packages"; return 1; }
    cp -L "$path" "$lib/$name"
    copy_needed "$root" "$lib/$name" "$lib" || return 1
  done
}

fetch_peer_qemu() {
  local scratch=$work/peer-qemu pkgs queue pkg dep seen=" "
  add_arm64_architecture
  mkdir -p "$scratch/debs" "$scratch/root"
  queue="qemu-system-arm"
  pkgs=""
  while [ -n "$queue" ]; do
    pkg=${queue%% *}
    queue=${queue#"$pkg"}
    queue=${queue# }
    case "$seen" in *" $pkg "*) continue ;; esac
    seen="$seen$pkg "
    pkgs="$pkgs $pkg:arm64"
    for dep in $(library_depends "$pkg"); do queue="$queue${queue:+ }$dep"; done
  done
  log "downloading qemu-system-arm:arm64 and $(($(wc -w <<<"$pkgs") - 1)) library packages"
  # shellcheck disable=SC2086 # one word per package
  (cd "$scratch/debs" && apt_quiet -o APT::Sandbox::User=root download $pkgs) || return 1
  for deb in "$scratch"/debs/*.deb; do dpkg-deb -x "$deb" "$scratch/root"; done
  local out="$ARM64_PEER_QEMU_DIR.tmp"
  rm -rf "$out"
  mkdir -p "$out/bin" "$out/lib"
  cp "$scratch/root/usr/bin/$ARM64_QEMU" "$out/bin/"
  copy_needed "$scratch/root" "$out/bin/$ARM64_QEMU" "$out/lib" || return 1
  cp -L "$scratch/root/lib/ld-linux-aarch64.so.1" "$out/lib/" || return 1
  "$ARM64_STRIP" --strip-unneeded "$out"/lib/*.so* 2>/dev/null || true
  rm -rf "$ARM64_PEER_QEMU_DIR"
  mv "$out" "$ARM64_PEER_QEMU_DIR"
}

if [ -x "$ARM64_PEER_QEMU_DIR/bin/$ARM64_QEMU" ]; then
  :
else
  [ -n "$work" ] || work=$(mktemp -d)
  if fetch_peer_qemu; then
    log "unpacked $ARM64_QEMU for the host and its $(find "$ARM64_PEER_QEMU_DIR/lib" -type f | wc -l) libraries ($(du -sk "$ARM64_PEER_QEMU_DIR" | cut -f 1) KiB) into $ARM64_PEER_QEMU_DIR"
  else
    tail -n 4 "$apt_log" >&2
    log "WARNING: could not unpack Debian's arm64 QEMU: the --peer qemu test in the emulated host will be SKIPPED" >&2
  fi
fi

# --- the Rust target (optional: only the cargo tests need it) ----------------
if rustup target list --installed 2>/dev/null | grep -qx "$ARM64_RUST_TARGET"; then
  :
elif command -v rustup >/dev/null && rustup target add "$ARM64_RUST_TARGET" >>"$apt_log" 2>&1; then
  log "installed the Rust target $ARM64_RUST_TARGET"
else
  log "WARNING: could not install the Rust target $ARM64_RUST_TARGET: the arm64 cargo tests will be SKIPPED" >&2
fi

log "ready: $("$ARM64_QEMU" --version | head -n 1), kernel $(cat "$ARM64_KERNEL_PACKAGE_FILE")"
