/*
 * vblktest: a libc-free /init (built like ../shared/guests/linux/tinit.c,
 * -m32, syscalls by int $0x80) that exercises /dev/vda through Linux's own
 * virtio-blk driver:
 *   - reads the first 4 KiB (O_DIRECT) and prints
 *     `VBLK-READ head=<32 hex digits> sum=<hex>`;
 *   - writes 4 KiB of `LINUX-WROTE-<off>` text at byte offset vblk.woff=
 *     (default 1 MiB), fsyncs, and prints `VBLK-WRITE ret=R fsync=F`
 *     (negative errno on failure; a read-only disk fails);
 *   - with vblk.bench=SECS, O_DIRECT reads and writes of 4 KiB and 64 KiB
 *     for SECS seconds each, one request in flight, printing
 *     `VBLK-BENCH op=read size=4096 ops=N ns=T iops=I lat_us=L`;
 * then, when a second disk /dev/vdb exists, tries to write it (expected
 * read-only): through a read-write descriptor if Linux gives one
 * (`VBLK-VDB-OPEN-RW ok`, `VBLK-VDB-WRITE-RW ret=-1`: EPERM) and through a
 * read-only one (`VBLK-VDB-WRITE ret=-9`),
 * then `VBLK-DONE`, the isa-debug-exit write named by exitport= (as
 * tinit does), and power-off.
 */
#include "init.h"

#define O_DIRECT 040000

static unsigned char io[65536] __attribute__((aligned(4096)));

static long pread_(long fd, void *b, ul n, u64 off)
{
	return sys6(NR_pread64, fd, (long)b, (long)n, (long)(ul)off, (long)(ul)(off >> 32), 0);
}

static long pwrite_(long fd, const void *b, ul n, u64 off)
{
	return sys6(NR_pwrite64, fd, (long)b, (long)n, (long)(ul)off, (long)(ul)(off >> 32), 0);
}

/* CLOCK_MONOTONIC in ns, 0 on failure. clock_gettime64: the 32-bit-time
 * call is gone from kernels without CONFIG_COMPAT_32BIT_TIME. */
static u64 now_ns(void)
{
	struct { long long s, ns; } ts = { 0, 0 };
	if (sys3(NR_clock_gettime64, 1, &ts, 0) != 0)
		return 0;
	return (u64)ts.s * 1000000000ull + (u64)ts.ns;
}

/* The number after `key` (e.g. "vblk.woff=") on the command line, or dflt. */
static u64 param_u64(const char *key, u64 dflt) { return parse_num(param(key), dflt); }

static void bench(long fd, int write, ul size, u64 secs, u64 span)
{
	u64 ops = 0, off = 0, t0 = now_ns(), end = t0 + secs * 1000000000ull, t;
	long r = 0;
	if (!t0) {
		puts_("VBLK-BENCH clock_gettime64 failed\n");
		return;
	}
	do {
		r = write ? pwrite_(fd, io, size, off) : pread_(fd, io, size, off);
		if (r != (long)size)
			break;
		ops++;
		off += size;
		if (off + size > span)
			off = 0;
		t = now_ns();
	} while (t < end);
	t = now_ns() - t0;
	puts_("VBLK-BENCH op=");
	puts_(write ? "write" : "read");
	puts_(" size=");
	putu(size);
	puts_(" ops=");
	putu(ops);
	puts_(" ns=");
	putu(t);
	puts_(" iops=");
	putu(t ? divmod(ops * 1000000000ull, t, 0) : 0);
	puts_(" lat_us=");
	putu(ops ? divmod(divmod(t, ops, 0), 1000, 0) : 0);
	if (r != (long)size) {
		puts_(" err=");
		puti(r);
	}
	puts_("\n");
}

void __attribute__((noreturn, used)) start_c(void)
{
	long fd, r;

	mount_basics();
	read_cmdline();
	puts_("VBLK-INIT-OK\n");

	int rw = 1;
	fd = sys3(NR_open, "/dev/vda", O_RDWR | O_DIRECT, 0);
	if (fd < 0) {
		puts_("VBLK-OPEN-RW err=");
		puti(fd);
		puts_("\n");
		rw = 0;
		fd = sys3(NR_open, "/dev/vda", O_RDONLY | O_DIRECT, 0);
	}
	if (fd < 0) {
		puts_("VBLK-OPEN err=");
		puti(fd);
		puts_("\n");
	} else {
		r = pread_(fd, io, 4096, 0);
		unsigned sum = 0;
		for (int i = 0; i < 4096; i++)
			sum = sum * 31 + io[i];
		puts_("VBLK-READ ret=");
		puti(r);
		puts_(" head=");
		for (int i = 0; i < 16; i++)
			puthex(io[i], 2);
		puts_(" sum=");
		puthex(sum, 8);
		puts_("\n");

		u64 woff = param_u64("vblk.woff=", 1 << 20);
		const char *tag = "LINUX-WROTE-";
		int k = 0;
		for (; tag[k]; k++)
			io[k] = tag[k];
		char num[24];
		int d = utoa(woff, num);
		while (d < (int)sizeof(num))
			io[k++] = num[d++];
		for (int i = k; i < 4096; i++)
			io[i] = (unsigned char)(i * 13);
		r = pwrite_(fd, io, 4096, woff);
		long f = rw ? sys3(NR_fsync, fd, 0, 0) : -9;
		puts_("VBLK-WRITE ret=");
		puti(r);
		puts_(" fsync=");
		puti(f);
		puts_("\n");

		u64 secs = param_u64("vblk.bench=", 0);
		if (secs) {
			u64 span = param_u64("vblk.span=", 32 << 20);
			for (int s = 0; s < 2; s++)
				for (int w = 0; w < 1 + rw; w++)
					bench(fd, w, s ? 65536 : 4096, secs, span);
		}
		sys3(NR_close, fd, 0, 0);
	}
	/* A second disk, if any, is expected read-only: both ways of writing
	 * it must fail (open for writing, and a write through a read-only fd). */
	fd = sys3(NR_open, "/dev/vdb", O_RDWR | O_DIRECT, 0);
	if (fd >= 0) {
		/* Linux opens a read-only disk for writing; the write fails. */
		for (int i = 0; i < 4096; i++)
			io[i] = 0xee;
		r = pwrite_(fd, io, 4096, 0);
		puts_("VBLK-VDB-OPEN-RW ok\nVBLK-VDB-WRITE-RW ret=");
		puti(r);
		puts_("\n");
		sys3(NR_close, fd, 0, 0);
	} else {
		puts_("VBLK-VDB-OPEN-RW err=");
		puti(fd);
		puts_("\n");
	}
	fd = sys3(NR_open, "/dev/vdb", O_RDONLY | O_DIRECT, 0);
	if (fd >= 0) {
		for (int i = 0; i < 4096; i++)
			io[i] = 0xee;
		r = pwrite_(fd, io, 4096, 0);
		puts_("VBLK-VDB-WRITE ret=");
		puti(r);
		puts_("\n");
		sys3(NR_close, fd, 0, 0);
	}
	puts_("VBLK-DONE\n");
	power_off();
}
