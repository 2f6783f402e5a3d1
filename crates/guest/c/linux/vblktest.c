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
typedef unsigned long ul;
typedef unsigned long long u64;

enum { NR_exit = 1, NR_read = 3, NR_write = 4, NR_open = 5, NR_close = 6, NR_lseek = 19,
       NR_mount = 21, NR_fsync = 118, NR_reboot = 88, NR_pread64 = 180, NR_pwrite64 = 181,
       NR_clock_gettime64 = 403 };
#define O_RDONLY 0
#define O_RDWR 2
#define O_DIRECT 040000

static long sys5(long n, long a, long b, long c, long d, long e)
{
	long r;
	asm volatile("int $0x80" : "=a"(r)
		     : "a"(n), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
		     : "memory");
	return r;
}
#define sys3(n, a, b, c) sys5(n, (long)(a), (long)(b), (long)(c), 0, 0)

static char cmdline[4096];
static unsigned char io[65536] __attribute__((aligned(4096)));

static ul slen(const char *s) { ul n = 0; while (s[n]) n++; return n; }
static void out(const char *s, ul n) { sys3(NR_write, 1, s, n); }
static void puts_(const char *s) { out(s, slen(s)); }

/* 64-bit division without libgcc (there is no 32-bit libgcc to link). */
static u64 divmod(u64 n, u64 d, u64 *rem)
{
	u64 q = 0, r = 0;
	for (int i = 63; i >= 0; i--) {
		r = r << 1 | (n >> i & 1);
		if (r >= d) {
			r -= d;
			q |= 1ull << i;
		}
	}
	if (rem)
		*rem = r;
	return q;
}

static int utoa(u64 u, char t[24])
{
	int i = 24;
	do {
		u64 r;
		u = divmod(u, 10, &r);
		t[--i] = '0' + (char)r;
	} while (u);
	return i;
}

static void putu(u64 u)
{
	char t[24];
	int i = utoa(u, t);
	out(t + i, sizeof(t) - i);
}

static void puti(long v)
{
	if (v < 0) {
		puts_("-");
		v = -v;
	}
	putu((u64)v);
}

static void puthex(ul v, int digits)
{
	char t[16];
	for (int i = digits - 1; i >= 0; i--, v >>= 4)
		t[i] = "0123456789abcdef"[v & 15];
	out(t, digits);
}

static long pread_(long fd, void *b, ul n, u64 off)
{
	return sys5(NR_pread64, fd, (long)b, (long)n, (long)(ul)off, (long)(ul)(off >> 32));
}

static long pwrite_(long fd, const void *b, ul n, u64 off)
{
	return sys5(NR_pwrite64, fd, (long)b, (long)n, (long)(ul)off, (long)(ul)(off >> 32));
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

/* The value of `key` (e.g. "vblk.woff=") on the command line, or dflt. */
static u64 param(const char *key, u64 dflt)
{
	ul k = slen(key);
	for (char *p = cmdline; *p; p++) {
		if (p != cmdline && p[-1] != ' ')
			continue;
		ul i = 0;
		while (i < k && p[i] == key[i])
			i++;
		if (i < k)
			continue;
		p += k;
		u64 v = 0;
		int base = 10;
		if (p[0] == '0' && p[1] == 'x') {
			base = 16;
			p += 2;
		}
		for (;; p++) {
			int c = *p, d;
			if (c >= '0' && c <= '9') d = c - '0';
			else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
			else return v;
			v = v * base + d;
		}
	}
	return dflt;
}

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
	static const char zero = 0;
	long fd, r, n;

	sys5(NR_mount, (long)"proc", (long)"/proc", (long)"proc", 0, 0);
	sys5(NR_mount, (long)"sysfs", (long)"/sys", (long)"sysfs", 0, 0);
	sys5(NR_mount, (long)"devtmpfs", (long)"/dev", (long)"devtmpfs", 0, 0);
	fd = sys3(NR_open, "/proc/cmdline", O_RDONLY, 0);
	n = fd >= 0 ? sys3(NR_read, fd, cmdline, sizeof(cmdline) - 1) : 0;
	cmdline[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		sys3(NR_close, fd, 0, 0);
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

		u64 woff = param("vblk.woff=", 1 << 20);
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

		u64 secs = param("vblk.bench=", 0);
		if (secs) {
			u64 span = param("vblk.span=", 32 << 20);
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
	long port = (long)param("exitport=", ~0ull);
	if (port >= 0 && port < 0x10000) {
		long pfd = sys3(NR_open, "/dev/port", O_RDWR, 0);
		if (pfd >= 0 && sys3(NR_lseek, pfd, port, 0) == port)
			sys3(NR_write, pfd, &zero, 1);
	}
	sys3(NR_reboot, 0xfee1dead, 672274793, 0x4321fedc);
	sys3(NR_reboot, 0xfee1dead, 672274793, 0x01234567);
	for (;;)
		sys3(NR_exit, 0, 0, 0);
}

asm(".globl _start\n_start:\n	and $-16, %esp\n	call start_c\n");
