#!/bin/busybox sh
# shellcheck shell=sh
# /init of the emulated ARM64 KVM host (packed by scripts/arm64/run-host.sh;
# runs under busybox as PID 1). Mounts what tests need, checks /dev/kvm, runs
# every test of /tests/tests in order, each under its own timeout, prints one
# line per test for run-host.sh to parse, then powers the machine off.
#
# Lines it prints (run-host.sh reads them; keep the two in step):
#   ARM64-HOST-UP <seconds since boot>
#   ARM64-HOST-NO-KVM                         (no test ran)
#   ARM64-TEST-START <name>
#   ARM64-TEST <name> PASS|FAIL|SKIP <seconds>
#   ARM64-HOST-END <number of tests run>
# A test passes with exit status 0, is skipped with 77 (automake's
# convention), and fails otherwise or when its timeout ends it.

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /tmp
/bin/busybox --install -s
export PATH=/tests:/bin:/sbin:/usr/bin:/usr/sbin HOME=/tmp TMPDIR=/tmp

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# A scratch tmpfs on /tmp, unless the initramfs packed files there: test.sh
# packs the tests and the repository at their own absolute paths, which are
# under /tmp for a clone there (a CI checkout), and a mount would hide them.
# /tmp then stays on the initramfs's root, which is in RAM and writable too.
if [ -z "$(ls -A /tmp)" ]; then
  mount -t tmpfs tmpfs /tmp
else
  echo "arm64-host: /tmp holds packed files (the repository lives under /tmp): no tmpfs over it"
fi

uptime_s() { cut -d ' ' -f 1 /proc/uptime; }
echo "ARM64-HOST-UP $(uptime_s)"
echo "arm64-host: $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB"
dmesg | grep -iE 'kvm \[|GICv3|CPU\(s\) started' | sed 's/^/arm64-host: /'

# Kernel modules the tests need of the host (test.sh packs the vhost-net
# ones), in their order; one that fails to load is said, and the tests that
# need it skip or fail by name.
if [ -f /tests/modules/order ]; then
  for m in $(cat /tests/modules/order); do
    insmod "/tests/modules/$m" || echo "arm64-host: WARNING: insmod $m failed"
  done
  echo "arm64-host: modules loaded: $(tr '\n' ' ' </tests/modules/order)($(ls /dev/vhost-net /dev/net/tun 2>/dev/null | tr '\n' ' '))"
fi

# Set by run-host.sh on the kernel's command line; the kernel passes an
# unknown name=value to init's environment.
timeout_default=${arm64_test_timeout:-300}

count=0
if [ ! -c /dev/kvm ]; then
  echo "ARM64-HOST-NO-KVM"
else
  while read -r name rest; do
    case "$name" in '' | '#'*) continue ;; esac
    limit=$timeout_default
    case "$rest" in
      timeout=*)
        limit=${rest%% *}
        limit=${limit#timeout=}
        rest=${rest#* }
        ;;
    esac
    count=$((count + 1))
    echo "ARM64-TEST-START $name"
    start=$(uptime_s)
    # stdin from /dev/null: the test must not eat the rest of the list.
    (cd /tests && exec timeout -s KILL "$limit" sh -c "$rest") </dev/null 2>&1
    status=$?
    took=$(awk -v a="$start" -v b="$(uptime_s)" 'BEGIN { printf "%.2f", b - a }')
    case "$status" in
      0) verdict=PASS ;;
      77) verdict=SKIP ;;
      137) verdict=FAIL; echo "arm64-host: $name: killed (its ${limit} s timeout ended it, or a SIGKILL)" ;;
      *) verdict=FAIL; echo "arm64-host: $name: exit status $status" ;;
    esac
    echo "ARM64-TEST $name $verdict $took"
  done </tests/tests
fi
echo "ARM64-HOST-END $count"
poweroff -f
