/*
 * What the libc-free Linux programs (nettest.c, vblktest.c; built like
 * ../shared/guests/linux/tinit.c) share: the system calls of the i386 ABI
 * (`int $0x80`, built -m32 for the tiny x86 Linux) and of the arm64 one
 * (`svc #0`), console output, the kernel command line, and an /init's
 * start (mounts) and end (the isa-debug-exit write, power-off). Each
 * program is one translation unit that includes this once and defines
 * start_c(), which _start calls.
 */
#ifndef TRAPLINE_LINUX_INIT_H
#define TRAPLINE_LINUX_INIT_H

typedef unsigned long ul;
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#if defined(__i386__)
enum { NR_exit = 1, NR_read = 3, NR_write = 4, NR_open = 5, NR_close = 6,
       NR_lseek = 19, NR_getpid = 20, NR_mount = 21, NR_ioctl = 54,
       NR_reboot = 88, NR_fsync = 118, NR_nanosleep = 162, NR_pread64 = 180,
       NR_pwrite64 = 181, NR_socket = 359, NR_bind = 361, NR_connect = 362,
       NR_setsockopt = 366, NR_sendto = 369, NR_recvfrom = 371,
       NR_clock_gettime64 = 403 };
static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long r;
	/* The sixth argument goes in ebp, which gcc will not take as an
	 * operand: pushed and restored around the trap. */
	long args[2] = { e, f }, *argp = args;
	asm volatile("push %%ebp\n\tmov 4(%%edi), %%ebp\n\tmov (%%edi), %%edi\n\t"
		     "int $0x80\n\tpop %%ebp"
		     : "=a"(r), "+D"(argp)
		     : "a"(n), "b"(a), "c"(b), "d"(c), "S"(d)
		     : "memory");
	return r;
}
#elif defined(__aarch64__)
enum { NR_openat = 56, NR_close = 57, NR_lseek = 62, NR_read = 63,
       NR_write = 64, NR_exit = 93, NR_nanosleep = 101, NR_reboot = 142,
       NR_getpid = 172, NR_mount = 40, NR_ioctl = 29, NR_socket = 198,
       NR_bind = 200, NR_connect = 203, NR_sendto = 206, NR_recvfrom = 207,
       NR_setsockopt = 208 };
static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 asm("x8") = n;
	register long x0 asm("x0") = a;
	register long x1 asm("x1") = b;
	register long x2 asm("x2") = c;
	register long x3 asm("x3") = d;
	register long x4 asm("x4") = e;
	register long x5 asm("x5") = f;
	asm volatile("svc #0"
		     : "+r"(x0)
		     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
		     : "memory");
	return x0;
}
#else
#error "c/linux programs: i386 or aarch64"
#endif
#define sys3(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2

static inline long sys_open(const char *path, long flags)
{
#ifdef __aarch64__
	return sys6(NR_openat, -100 /* AT_FDCWD */, (long)path, flags, 0, 0, 0);
#else
	return sys3(NR_open, path, flags, 0);
#endif
}

/* ---- console ---- */

static inline ul slen(const char *s) { ul n = 0; while (s[n]) n++; return n; }
static inline void out(const char *s, ul n) { sys3(NR_write, 1, s, n); }
static inline void puts_(const char *s) { out(s, slen(s)); }

/* 64-bit division without libgcc (there is no 32-bit libgcc to link). */
static inline u64 divmod(u64 n, u64 d, u64 *rem)
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

/* u's decimal digits at the end of t; the index of the first. */
static inline int utoa(u64 u, char t[24])
{
	int i = 24;
	do {
		u64 r;
		u = divmod(u, 10, &r);
		t[--i] = '0' + (char)r;
	} while (u);
	return i;
}

static inline void putu(u64 u)
{
	char t[24];
	int i = utoa(u, t);
	out(t + i, sizeof(t) - i);
}

static inline void puti(long v)
{
	if (v < 0) {
		puts_("-");
		v = -v;
	}
	putu((u64)v);
}

static inline void puthex(ul v, int digits)
{
	char t[16];
	for (int i = digits - 1; i >= 0; i--, v >>= 4)
		t[i] = "0123456789abcdef"[v & 15];
	out(t, digits);
}

/* ---- the kernel command line ---- */

static char cmdline[4096];

/* /proc/cmdline into cmdline[] (empty when it cannot be read). */
static inline void read_cmdline(void)
{
	long fd = sys_open("/proc/cmdline", O_RDONLY);
	long n = fd >= 0 ? sys3(NR_read, fd, cmdline, sizeof(cmdline) - 1) : 0;
	cmdline[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		sys3(NR_close, fd, 0, 0);
}

/* The value after `key` on the command line (a word starting with it), or 0. */
static inline const char *param(const char *key)
{
	ul k = slen(key);
	for (char *p = cmdline; *p; p++) {
		if (p != cmdline && p[-1] != ' ')
			continue;
		ul i = 0;
		while (i < k && p[i] == key[i])
			i++;
		if (i == k)
			return p + k;
	}
	return 0;
}

/* A decimal or 0x-hexadecimal number at s (up to its first other
 * character), or dflt when s is 0. */
static inline u64 parse_num(const char *s, u64 dflt)
{
	if (!s)
		return dflt;
	u64 v = 0;
	int base = 10;
	if (s[0] == '0' && s[1] == 'x') {
		base = 16;
		s += 2;
	}
	for (;; s++) {
		int c = *s, d;
		if (c >= '0' && c <= '9') d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
		else return v;
		v = v * (u64)base + (u64)d;
	}
}

/* ---- an /init's start and end ---- */

static inline void mount_basics(void)
{
	sys6(NR_mount, (long)"proc", (long)"/proc", (long)"proc", 0, 0, 0);
	sys6(NR_mount, (long)"sysfs", (long)"/sys", (long)"sysfs", 0, 0, 0);
	sys6(NR_mount, (long)"devtmpfs", (long)"/dev", (long)"devtmpfs", 0, 0, 0);
}

/* As tinit: on x86 a byte to the isa-debug-exit port named by exitport=
 * (through /dev/port), then power-off (PID 1 only). */
static inline void __attribute__((noreturn)) power_off(void)
{
#ifdef __i386__
	static const char zero = 0;
	long port = (long)parse_num(param("exitport="), ~0ul);
	if (port >= 0 && port < 0x10000) {
		long pfd = sys_open("/dev/port", O_RDWR);
		if (pfd >= 0 && sys3(NR_lseek, pfd, port, 0) == port)
			sys3(NR_write, pfd, &zero, 1);
	}
#endif
	sys3(NR_reboot, 0xfee1dead, 672274793, 0x4321fedc);
	sys3(NR_reboot, 0xfee1dead, 672274793, 0x01234567);
	for (;;)
		sys3(NR_exit, 0, 0, 0);
}

void __attribute__((noreturn, used)) start_c(void);

#ifdef __i386__
asm(".globl _start\n_start:\n	and $-16, %esp\n	call start_c\n");
#else
asm(".globl _start\n_start:\n	mov x29, #0\n	mov x30, #0\n	bl start_c\n");
#endif

#endif
