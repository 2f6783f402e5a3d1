/*
 * What vnet's shared driver (vnet.c, frame.c) and its machine half
 * (payloads/<arch>/vnet_machine.c) share: the transports to look at, the
 * interrupt's way to this CPU and the clock's rate. The transport's
 * steps are virtio_mmio.h's.
 */
#ifndef VNET_H
#define VNET_H

#include "virtio_mmio.h"

/* One virtio-mmio transport the machine offers: its base and interrupt line. */
struct vnet_transport {
    u64 base;
    u32 line;
};

#define VNET_MAX_TRANSPORTS 32

/* The machine half. */
struct vnet_machine {
    const char *line_name; /* the device line's name for the interrupt: "gsi", "intid" */
    const char *hint;      /* said after "no virtio-net among the transports" */
};
extern const struct vnet_machine vnet_machine;
/* The transports to scan for DeviceID 1 (up to `max`); their number. */
int vnet_transports(struct vnet_transport *t, int max);
/* The device's interrupt routed to this CPU and interrupts on: `handler` runs
 * for each one (it acks the device); the machine half ends it. */
void vnet_irq_on(u32 line, void (*handler)(void));
/* Clock ticks (clock_now()) per second; 0 when the machine cannot say. */
u64 vnet_clock_hz(void);

/* ---- frames (frame.c): Ethernet II + IPv4 + UDP, checksummed ---- */
#define ETH_HLEN 14
#define IP_HLEN 20
#define UDP_HLEN 8
#define FRAME_HDRS (ETH_HLEN + IP_HLEN + UDP_HLEN)
/* The largest UDP payload of an untagged 1514-byte frame. */
#define UDP_MAX_PAYLOAD (1514 - FRAME_HDRS)
/* The payload's first bytes: a magic and the sequence number (big-endian). */
#define VNET_MAGIC 0x544c4e54u /* "TLNT" */
#define VNET_PAYLOAD_MIN 8

struct endpoint {
    u8 mac[6];
    u32 ip; /* host order */
    u16 port;
};

/* A frame of `size` payload bytes from `src` to `dst` with sequence number 0
 * into `f`; its length. *sum: the UDP checksum's sum without the number. */
u32 frame_template(u8 *f, const struct endpoint *src, const struct endpoint *dst, u32 size, u32 *sum);
/* Stamps `seq` into a template: the payload's number, the IP id, both checksums. */
void frame_stamp(u8 *f, u32 sum, u32 seq);
/* frame_template and frame_stamp at once. */
u32 frame_build(u8 *f, const struct endpoint *src, const struct endpoint *dst, u32 seq, u32 size);
/* The sequence number of a frame between `a` and `b` (either way), or -1 when it is none of ours. */
s64 frame_seq(const u8 *f, u32 len, const struct endpoint *a, const struct endpoint *b);
/* Whether `f` is exactly a UDP echo's reply to the request `req` (`req_len` bytes). */
bool frame_is_reply(const u8 *f, u32 len, const u8 *req, u32 req_len);
/* n bytes equal (32-bit words where both are aligned). */
bool frames_equal(const u8 *a, const u8 *b, u32 n);
/* The Internet checksum of `len` bytes, folded, starting from `sum`. */
u16 inet_csum(const void *p, u32 len, u32 sum);
/* "a.b.c.d" and "xx:xx:xx:xx:xx:xx" (command-line values). */
bool parse_ipv4(const char *s, u32 *ip);
bool parse_mac(const char *s, u8 mac[6]);

#endif
