#!/usr/bin/env python3
"""Write the link order of the code and named data a plain `trapline run`
uses.

Usage: scripts/hot-symbols.py --write
       scripts/hot-symbols.py BINARY > crates/cli/link/hot-symbols.txt

--write is the one command to run when the list is stale (the test
crates/cli/tests/link_order.rs says so): it builds the release `trapline`,
traces it, writes crates/cli/link/hot-symbols.txt, and builds again so the
binary is linked in the new order. Run it from anywhere in the checkout,
on x86_64 with Valgrind installed; it takes a few minutes.

Runs BINARY (a release `trapline`, x86_64) under Valgrind's lackey tool
booting builtin:hello, maps every executed instruction to the function
symbol that holds it and every data access to the named object it reads
or writes, and prints those names in the order they were first used.
crates/cli/build.rs hands the file to the linker (--symbol-ordering-file),
which places them first and together in their sections: start-up then
touches a few dense pages instead of one page in every 64 KiB of a 4 MiB
text and 1.5 MiB of read-only data (the kernel maps a file page fault's
64 KiB neighbourhood, so scattered code costs resident memory and faults;
see docs/bench.md#footprint). Anonymous constants (string literals, the
embedded guest payloads) have no name to order. Names that no longer exist
after a change are ignored by the linker: the order only decays, and
regenerating it restores it.
"""

import bisect
import os
import re
import subprocess
import sys
import tempfile

# The runs traced: the bench's footprint run (TRAPLINE_FOOTPRINT=1, so the
# smaps reading after the run is in), the console on stdio (its input
# thread), and one with the seccomp filters, which compiles them before
# Valgrind's own system calls trip them (that run may then die: only its
# trace counts).
RUNS = [
    (["--serial", "none", "--no-seccomp"], True),
    (["--serial", "stdio", "--no-seccomp"], True),
    (["--serial", "none"], False),
]
# glibc picks its string functions by CPU (an ifunc): under Valgrind the
# AVX2 ones, natively often the AVX-512/EVEX ones, on AMD others again.
# Each traced variant brings in its whole family.
IFUNC_FAMILY = re.compile(r"^(__[a-z0-9]+?)_(avx|evex|sse|erms|ssse3)")
# What runs natively but not under Valgrind: glibc's cache-size probe on
# the other vendor, and its lookup of the vDSO's symbols at start-up
# (Valgrind hides the vDSO), with strcmp's family.
NATIVE_ONLY = [
    "handle_amd", "handle_zhaoxin", "setup_vdso", "_dl_new_object",
    "_dl_add_to_namespace_list", "_dl_setup_hash", "do_lookup_x",
    "check_match", "frame_dummy",
]
NATIVE_FAMILIES = ["__strcmp"]
# LTO renames clashing local copies `name.N` by a module-wide counter, so
# N moves when any code changes: each such name is listed with this many
# neighbours either side (the linker skips names that do not exist).
SUFFIXED = re.compile(r"^(.*)\.([0-9]+)$")
SUFFIX_SLACK = 64


def symbols(binary, kinds):
    """(start, end, name) of every sized symbol of an nm type in `kinds`,
    by address."""
    out = subprocess.run(
        ["nm", "--defined-only", "-n", "-S", binary],
        check=True, capture_output=True, text=True,
    ).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[2] not in kinds:
            continue
        start, size = int(parts[0], 16), int(parts[1], 16)
        if size:
            syms.append((start, start + size, parts[3]))
    syms.sort()
    return syms


def entry_point(binary):
    out = subprocess.run(
        ["readelf", "-h", binary], check=True, capture_output=True, text=True
    ).stdout
    for line in out.splitlines():
        if "Entry point address" in line:
            return int(line.split()[-1], 16)
    raise SystemExit("no entry point in " + binary)


def accesses(binary, args):
    """(is_code, address) of every instruction a hello run executes and
    every data address it touches, in order (the load base subtracted:
    Valgrind's first instruction is the entry). `args` follow
    `--kernel builtin:hello`."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "lackey.log")
        subprocess.run(
            ["timeout", "600", "valgrind", "--tool=lackey", "--trace-mem=yes",
             "--log-file=" + log, binary, "run", "--kernel", "builtin:hello",
             *args, "--timeout", "30"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=dict(os.environ, TRAPLINE_FOOTPRINT="1"),
        )
        base = None
        entry = entry_point(binary)
        with open(log) as f:
            for line in f:
                kind = line[:2]
                if kind not in ("I ", " L", " S", " M"):
                    continue
                addr = int(line[3:].split(",")[0], 16)
                if base is None:
                    if kind != "I ":
                        continue
                    base = addr - entry
                yield kind == "I ", addr - base


class Finder:
    """Which named symbol holds an address."""

    def __init__(self, syms):
        self.syms = syms
        self.starts = [s[0] for s in syms]

    def name(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0 or addr >= self.syms[i][1]:
            return None
        return self.syms[i][2]


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "crates", "cli", "link", "hot-symbols.txt")
RELEASE = os.path.join(ROOT, "target", "x86_64-unknown-linux-gnu", "release", "trapline")


def build_release():
    subprocess.run(["cargo", "build", "--release", "-p", "trapline"], cwd=ROOT, check=True)


def write():
    """Build, trace, write the list, and link once more in its order."""
    build_release()
    text = hot_list(RELEASE)
    with open(LIST, "w") as f:
        f.write(text + "\n")
    build_release()
    print(f"hot-symbols.py: wrote {len(text.splitlines())} names to {LIST} and "
          "relinked trapline in their order; commit the list", file=sys.stderr)


def main():
    if sys.argv[1:] == ["--write"]:
        write()
        return
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        raise SystemExit(__doc__)
    print(hot_list(sys.argv[1]))


def hot_list(binary):
    """The list's text for `binary`: one name a line, first used first."""
    code_syms = symbols(binary, "tTwWi")
    code = Finder(code_syms)
    data = Finder(symbols(binary, "rRdDbBvV"))
    seen = set()
    order = []

    def add(name):
        if name is not None and name not in seen:
            seen.add(name)
            order.append(name)

    for args, must_boot in RUNS:
        ran = 0
        for is_code, addr in accesses(binary, args):
            if is_code:
                name = code.name(addr)
                ran += name is not None
            else:
                name = data.name(addr)
            add(name)
        if must_boot and ran < 100_000:
            raise SystemExit(f"only {ran} instructions ran with {args}: did the guest boot?")
    families = {m.group(1) for m in map(IFUNC_FAMILY.match, order) if m}
    families.update(NATIVE_FAMILIES)
    for _, _, name in code_syms:
        m = IFUNC_FAMILY.match(name)
        if (m and m.group(1) in families) or name in NATIVE_ONLY:
            add(name)
    lines = []
    for name in order:
        m = SUFFIXED.match(name)
        if m:
            base, n = m.group(1), int(m.group(2))
            lines += [f"{base}.{k}" for k in range(max(0, n - SUFFIX_SLACK), n + SUFFIX_SLACK + 1)]
        else:
            lines.append(name)
    seen_lines = set()
    return "\n".join(x for x in lines if not (x in seen_lines or seen_lines.add(x)))


if __name__ == "__main__":
    main()
