/*
 * nettest: UDP over eth0 through Linux's own virtio-net driver, libc-free
 * (like ../shared/guests/linux/tinit.c and vblktest.c): one source for
 * the i386 ABI (`int $0x80`, built -m32 for the tiny x86 Linux) and the
 * arm64 one (`svc #0`, for Debian's arm64 kernel).
 *
 * As PID 1 (the tiny Linux's /init) it mounts proc/sys/devtmpfs and brings
 * eth0 up itself (SIOCSIFADDR, SIOCSIFNETMASK, SIOCSIFFLAGS); started by
 * another init (busybox, which brought eth0 up with `ip`) it only checks
 * that eth0 is up. Then the exchange, chosen on the kernel command line:
 *
 *   net.ip=A.B.C.D        eth0's address (default 10.0.2.2)
 *   net.mask=A.B.C.D      its netmask (default 255.255.255.0)
 *   net.peer=echo         the VMM reflects every frame eth0 sends (trapline's
 *                         echo back end): each datagram goes to the subnet's
 *                         broadcast address, so no ARP is needed, and comes
 *                         back twice, once looped back by the guest's own
 *                         stack and once received on eth0 (accepted with
 *                         accept_local=1: its source is the guest's own
 *                         address); the eth0 receive counter must grow by
 *                         at least the datagrams sent
 *   net.peer=A.B.C.D:P    a UDP echo at that address and port (a TAP's
 *                         far side): each datagram must come back once
 *   net.count=N           datagrams (default 8; sizes cycle 1 .. 1472 bytes)
 *   exitport=0xNN         as tinit: a write there (isa-debug-exit) before
 *                         powering off (PID 1 only)
 *
 * Every payload byte is checked. Lines:
 *   NETTEST-INIT-OK pid=P
 *   NETTEST-IFUP eth0 addr=A mask=M flags=0x.. mac=xx:..
 *   NETTEST-UDP mode=echo|peer sent=N got=N copies=C bad=B rx_frames=F
 *   NETTEST-RESULT ok|fail <why>
 * then, as PID 1, power-off.
 */
#include "init.h"

#define AF_INET 2
#define SOCK_DGRAM 2
#define SOL_SOCKET 1
#define SO_BROADCAST 6
#define SO_RCVTIMEO 20 /* the `long` timeval on both ABIs */
#define SIOCGIFFLAGS 0x8913
#define SIOCSIFFLAGS 0x8914
#define SIOCSIFADDR 0x8916
#define SIOCSIFNETMASK 0x891c
#define SIOCGIFHWADDR 0x8927
#define IFF_UP 0x1
#define IFF_RUNNING 0x40
#define EAGAIN 11

struct sockaddr_in {
	u16 family;
	u16 port; /* network order */
	u32 addr; /* network order */
	u8 zero[8];
};

struct ifreq {
	char name[16];
	union {
		struct sockaddr_in addr;
		struct { u16 family; u8 data[14]; } hw;
		short flags;
		u8 pad[24]; /* the kernel's union is 24 bytes on 64-bit ABIs */
	} u;
};

static u8 txbuf[1500], rxbuf[2048];

static u16 be16(u16 v) { return (u16)(v << 8 | v >> 8); }

/* addr in network order: printed as A.B.C.D. */
static void putip(u32 addr)
{
	const u8 *b = (const u8 *)&addr;
	for (int i = 0; i < 4; i++) {
		if (i)
			puts_(".");
		putu(b[i]);
	}
}

/* Parses A.B.C.D (network order into *addr); returns the end or 0. */
static const char *parse_ip(const char *s, u32 *addr)
{
	u8 b[4];
	for (int i = 0; i < 4; i++) {
		ul v = 0;
		int digits = 0;
		while (*s >= '0' && *s <= '9' && digits < 4) {
			v = v * 10 + (ul)(*s++ - '0');
			digits++;
		}
		if (!digits || v > 255 || (i < 3 && *s++ != '.'))
			return 0;
		b[i] = (u8)v;
	}
	*addr = (u32)b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
	return s;
}

/* A whole number read from a file (a sysfs counter), or ~0 on failure. */
static ul read_num(const char *path)
{
	char t[32];
	long fd = sys_open(path, O_RDONLY), n;
	if (fd < 0)
		return ~0ul;
	n = sys3(NR_read, fd, t, sizeof(t) - 1);
	sys3(NR_close, fd, 0, 0);
	if (n <= 0)
		return ~0ul;
	t[n] = 0;
	return parse_num(t, ~0ul);
}

static long write_file(const char *path, const char *text)
{
	long fd = sys_open(path, O_WRONLY), r;
	if (fd < 0)
		return fd;
	r = sys3(NR_write, fd, text, slen(text));
	sys3(NR_close, fd, 0, 0);
	return r;
}

static void name_eth0(struct ifreq *r)
{
	static const char eth0[] = "eth0";
	for (ul i = 0; i < sizeof(*r); i++)
		((u8 *)r)[i] = 0;
	for (ul i = 0; i < sizeof(eth0); i++)
		r->name[i] = eth0[i];
}

static void set_sin(struct sockaddr_in *s, u32 addr, u16 port)
{
	for (ul i = 0; i < sizeof(*s); i++)
		((u8 *)s)[i] = 0;
	s->family = AF_INET;
	s->addr = addr;
	s->port = be16(port);
}

static int fail(const char *why, long err)
{
	puts_("NETTEST-RESULT fail ");
	puts_(why);
	if (err) {
		puts_(" err=");
		puti(err);
	}
	puts_("\n");
	return 1;
}

/* eth0 up with `addr`/`mask` when `configure` (PID 1), else only checked;
 * prints NETTEST-IFUP. Returns 0 when it is up. */
static int eth0_up(long s, int configure, u32 addr, u32 mask)
{
	struct ifreq r;
	long e;
	if (configure) {
		name_eth0(&r);
		set_sin(&r.u.addr, addr, 0);
		if ((e = sys3(NR_ioctl, s, SIOCSIFADDR, &r)) < 0)
			return fail("SIOCSIFADDR", e);
		name_eth0(&r);
		set_sin(&r.u.addr, mask, 0);
		if ((e = sys3(NR_ioctl, s, SIOCSIFNETMASK, &r)) < 0)
			return fail("SIOCSIFNETMASK", e);
		name_eth0(&r);
		if ((e = sys3(NR_ioctl, s, SIOCGIFFLAGS, &r)) < 0)
			return fail("SIOCGIFFLAGS", e);
		r.u.flags |= IFF_UP;
		if ((e = sys3(NR_ioctl, s, SIOCSIFFLAGS, &r)) < 0)
			return fail("SIOCSIFFLAGS", e);
	}
	name_eth0(&r);
	if ((e = sys3(NR_ioctl, s, SIOCGIFFLAGS, &r)) < 0)
		return fail("no eth0 (SIOCGIFFLAGS)", e);
	short flags = r.u.flags;
	name_eth0(&r);
	if ((e = sys3(NR_ioctl, s, SIOCGIFHWADDR, &r)) < 0)
		return fail("SIOCGIFHWADDR", e);
	puts_("NETTEST-IFUP eth0 addr=");
	putip(addr);
	puts_(" mask=");
	putip(mask);
	puts_(" flags=0x");
	puthex((ul)(u16)flags, 4);
	puts_(" mac=");
	for (int i = 0; i < 6; i++) {
		if (i)
			puts_(":");
		puthex(r.u.hw.data[i], 2);
	}
	puts_("\n");
	return (flags & IFF_UP) ? 0 : fail("eth0 is down", 0);
}

/* Datagram `seq`'s size and bytes: sizes cycle through 1 .. 1472 (a
 * whole 1500-byte frame), the first bytes carry the sequence number. */
static ul fill(ul seq)
{
	static const u16 sizes[] = { 64, 1, 512, 1472, 200, 1000, 8, 1400 };
	ul n = sizes[seq % (sizeof(sizes) / sizeof(sizes[0]))];
	for (ul i = 0; i < n; i++)
		txbuf[i] = (u8)(seq * 31 + i * 7 + 1);
	txbuf[0] = (u8)seq;
	return n;
}

/* Whether `got` bytes in rxbuf are datagram `seq`'s. */
static int same(ul seq, long got)
{
	ul n = fill(seq);
	if (got != (long)n)
		return 0;
	for (ul i = 0; i < n; i++)
		if (rxbuf[i] != txbuf[i])
			return 0;
	return 1;
}

struct tally { ul sent, got, copies, bad; };

/* Sends `count` datagrams to `to` and waits for `want` copies of each
 * (2 for echo through broadcast, 1 for a peer). */
static int exchange(long s, const struct sockaddr_in *to, ul count, ul want, struct tally *t)
{
	for (ul seq = 0; seq < count; seq++) {
		ul n = fill(seq), seen = 0, tries = 0;
		long e = sys6(NR_sendto, s, (long)txbuf, (long)n, 0, (long)to, sizeof(*to));
		if (e != (long)n)
			return fail("sendto", e);
		t->sent++;
		while (seen < want) {
			long got = sys6(NR_recvfrom, s, (long)rxbuf, sizeof(rxbuf), 0, 0, 0);
			if (got == -EAGAIN) {
				/* A peer's first datagram may wait on ARP; send again. */
				if (++tries > 3)
					return fail("timed out waiting for a datagram", seq + 1);
				if (want == 1)
					sys6(NR_sendto, s, (long)txbuf, (long)n, 0, (long)to, sizeof(*to));
				continue;
			}
			if (got < 0)
				return fail("recvfrom", got);
			t->copies++;
			if (same(seq, got))
				seen++;
			else if (!(got > 0 && rxbuf[0] < (u8)seq))
				t->bad++; /* not a late copy of an earlier one */
		}
		t->got++;
	}
	return 0;
}

static int run(int configure)
{
	u32 addr, mask, peer = 0, bcast;
	ul port = 7;
	const char *v;
	if (!(v = param("net.ip=")) || !parse_ip(v, &addr))
		parse_ip("10.0.2.2", &addr);
	if (!(v = param("net.mask=")) || !parse_ip(v, &mask))
		parse_ip("255.255.255.0", &mask);
	int echo = 1;
	if ((v = param("net.peer=")) && !(v[0] == 'e' && v[1] == 'c')) {
		echo = 0;
		const char *end = parse_ip(v, &peer);
		if (!end || *end != ':')
			return fail("net.peer= wants echo or A.B.C.D:PORT", 0);
		port = parse_num(end + 1, 7);
	}
	ul count = parse_num(param("net.count="), 8);

	long s = sys3(NR_socket, AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return fail("socket", s);
	if (eth0_up(s, configure, addr, mask))
		return 1;

	struct sockaddr_in me, to;
	long one = 1, e;
	long tv[2] = { 2, 0 }; /* 2 s per wait */
	sys6(NR_setsockopt, s, SOL_SOCKET, SO_RCVTIMEO, (long)tv, sizeof(tv), 0);
	if (echo) {
		/* The reflection's source is this guest's own address: a martian
		 * unless eth0 accepts local sources. */
		if ((e = write_file("/proc/sys/net/ipv4/conf/all/accept_local", "1\n")) < 0)
			return fail("accept_local", e);
		sys6(NR_setsockopt, s, SOL_SOCKET, SO_BROADCAST, (long)&one, sizeof(one), 0);
		port = 7777;
		bcast = addr | ~mask;
		set_sin(&to, bcast, (u16)port);
		set_sin(&me, 0, (u16)port);
	} else {
		set_sin(&to, peer, (u16)port);
		set_sin(&me, addr, 0);
	}
	if ((e = sys3(NR_bind, s, &me, sizeof(me))) < 0)
		return fail("bind", e);

	ul rx0 = read_num("/sys/class/net/eth0/statistics/rx_packets");
	struct tally t = { 0, 0, 0, 0 };
	int r = exchange(s, &to, count, echo ? 2 : 1, &t);
	ul rx1 = read_num("/sys/class/net/eth0/statistics/rx_packets");
	ul frames = rx1 - rx0;
	puts_("NETTEST-UDP mode=");
	puts_(echo ? "echo" : "peer");
	puts_(" to=");
	putip(to.addr);
	puts_(":");
	putu(port);
	puts_(" sent=");
	putu(t.sent);
	puts_(" got=");
	putu(t.got);
	puts_(" copies=");
	putu(t.copies);
	puts_(" bad=");
	putu(t.bad);
	puts_(" rx_frames=");
	putu(frames);
	puts_("\n");
	sys3(NR_close, s, 0, 0);
	if (r)
		return r;
	if (t.bad)
		return fail("datagrams with the wrong bytes", (long)t.bad);
	if (rx0 == ~0ul || rx1 == ~0ul || frames < count)
		return fail("eth0 received fewer frames than datagrams came back", (long)frames);
	puts_("NETTEST-RESULT ok\n");
	return 0;
}

void __attribute__((noreturn, used)) start_c(void)
{
	int pid1 = sys3(NR_getpid, 0, 0, 0) == 1;

	if (pid1)
		mount_basics();
	read_cmdline();
	puts_("NETTEST-INIT-OK pid=");
	putu((ul)sys3(NR_getpid, 0, 0, 0));
	puts_("\n");

	int r = run(pid1);
	if (!pid1)
		for (;;)
			sys3(NR_exit, r, 0, 0);
	power_off();
}
