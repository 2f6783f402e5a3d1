/*
 * vnet's frames: Ethernet II, IPv4 (no options, DF, TTL 64), UDP with
 * its checksum over the pseudo-header, and a payload that carries a magic,
 * the sequence number and a fixed pattern. Each transmit slot keeps its
 * frame as a template, so a send stamps only the sequence number, the IP
 * id and both checksums: per-byte work in the guest is kept off the timed
 * path (it is slow on a software-virtualised host). An echo is checked
 * against the frame sent, word by word. No offloads: the device is
 * offered whole, checksummed frames (virtio-net without CSUM).
 */
#include "vnet.h"

static void put16(u8 *p, u16 v)
{
    p[0] = (u8)(v >> 8);
    p[1] = (u8)v;
}

static void put32(u8 *p, u32 v)
{
    put16(p, (u16)(v >> 16));
    put16(p + 2, (u16)v);
}

static u16 get16(const u8 *p) { return (u16)(p[0] << 8 | p[1]); }
static u32 get32(const u8 *p) { return (u32)get16(p) << 16 | get16(p + 2); }

/* The one's-complement sum of big-endian 16-bit words, folded and inverted. */
u16 inet_csum(const void *p, u32 len, u32 sum)
{
    const u8 *b = p;
    for (u32 i = 0; i + 1 < len; i += 2)
        sum += get16(b + i);
    if (len & 1)
        sum += (u32)b[len - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (u16)~sum;
}

/* The UDP pseudo-header's share of the checksum (RFC 768). */
static u32 pseudo_sum(u32 src, u32 dst, u16 udp_len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + 17 + udp_len;
}

/* The payload after its magic and sequence number: the same for every frame of a size. */
static u8 pattern(u32 i) { return (u8)(i * 131u + (i >> 8)); }

static u32 clamp_size(u32 size)
{
    return size < VNET_PAYLOAD_MIN ? VNET_PAYLOAD_MIN : size > UDP_MAX_PAYLOAD ? UDP_MAX_PAYLOAD : size;
}

static u16 fold(u32 sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (u16)~sum;
}

u32 frame_template(u8 *f, const struct endpoint *src, const struct endpoint *dst, u32 size, u32 *sum)
{
    size = clamp_size(size);
    u8 *ip = f + ETH_HLEN, *udp = ip + IP_HLEN, *pl = udp + UDP_HLEN;
    memcpy(f, dst->mac, 6);
    memcpy(f + 6, src->mac, 6);
    put16(f + 12, 0x0800);
    ip[0] = 0x45;
    ip[1] = 0;
    put16(ip + 2, (u16)(IP_HLEN + UDP_HLEN + size));
    put16(ip + 4, 0);
    put16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = 17;
    put16(ip + 10, 0);
    put32(ip + 12, src->ip);
    put32(ip + 16, dst->ip);
    put16(udp, src->port);
    put16(udp + 2, dst->port);
    put16(udp + 4, (u16)(UDP_HLEN + size));
    put16(udp + 6, 0);
    put32(pl, VNET_MAGIC);
    put32(pl + 4, 0);
    for (u32 i = VNET_PAYLOAD_MIN; i < size; i++)
        pl[i] = pattern(i);
    /* The UDP sum without the sequence number, unfolded: frame_stamp adds it. */
    u16 c = inet_csum(udp, UDP_HLEN + size, pseudo_sum(src->ip, dst->ip, (u16)(UDP_HLEN + size)));
    *sum = (u16)~c;
    return ETH_HLEN + IP_HLEN + UDP_HLEN + size;
}

void frame_stamp(u8 *f, u32 sum, u32 seq)
{
    u8 *ip = f + ETH_HLEN, *udp = ip + IP_HLEN, *pl = udp + UDP_HLEN;
    put32(pl + 4, seq);
    put16(ip + 4, (u16)seq);
    put16(ip + 10, 0);
    put16(ip + 10, inet_csum(ip, IP_HLEN, 0));
    u16 c = fold(sum + (seq >> 16) + (seq & 0xffff));
    put16(udp + 6, c ? c : 0xffff); /* 0 would mean "no checksum" */
}

u32 frame_build(u8 *f, const struct endpoint *src, const struct endpoint *dst, u32 seq, u32 size)
{
    u32 sum, len = frame_template(f, src, dst, size, &sum);
    frame_stamp(f, sum, seq);
    return len;
}

s64 frame_seq(const u8 *f, u32 len, const struct endpoint *a, const struct endpoint *b)
{
    if (len < FRAME_HDRS + VNET_PAYLOAD_MIN || get16(f + 12) != 0x0800)
        return -1;
    const u8 *ip = f + ETH_HLEN, *udp = ip + IP_HLEN, *pl = udp + UDP_HLEN;
    if (ip[0] != 0x45 || ip[9] != 17)
        return -1;
    u16 sp = get16(udp), dp = get16(udp + 2);
    bool ours = (sp == a->port && dp == b->port) || (sp == b->port && dp == a->port);
    if (!ours || get32(pl) != VNET_MAGIC)
        return -1;
    return get32(pl + 4);
}

bool frames_equal(const u8 *a, const u8 *b, u32 n)
{
    u32 i = 0;
    if (((u64)a & 3) == 0 && ((u64)b & 3) == 0)
        for (; i + 4 <= n; i += 4)
            if (*(const u32 *)(a + i) != *(const u32 *)(b + i))
                return false;
    for (; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

bool frame_is_reply(const u8 *f, u32 len, const u8 *req, u32 req_len)
{
    const u8 *ip = f + ETH_HLEN, *udp = ip + IP_HLEN;
    const u8 *rip = req + ETH_HLEN, *rudp = rip + IP_HLEN;
    u32 payload = req_len - FRAME_HDRS;
    /* A frame shorter than 60 bytes is padded on the wire: the IP length says what counts. */
    if (len < req_len || memcmp(f, req + 6, 6) || memcmp(f + 6, req, 6) || get16(f + 12) != 0x0800)
        return false;
    if (ip[0] != 0x45 || ip[9] != 17 || get16(ip + 2) != get16(rip + 2) || inet_csum(ip, IP_HLEN, 0) != 0)
        return false;
    if (get32(ip + 12) != get32(rip + 16) || get32(ip + 16) != get32(rip + 12))
        return false;
    /* Ports swapped, same length; the same payload and pseudo-header sum give the same checksum. */
    if (get16(udp) != get16(rudp + 2) || get16(udp + 2) != get16(rudp) || get16(udp + 4) != get16(rudp + 4))
        return false;
    if (get16(udp + 6) && get16(udp + 6) != get16(rudp + 6))
        return false;
    return frames_equal(udp + UDP_HLEN, rudp + UDP_HLEN, payload);
}

bool parse_ipv4(const char *s, u32 *ip)
{
    u32 v = 0;
    for (int i = 0; i < 4; i++) {
        u64 part;
        const char *end;
        if (!s || !parse_u64(s, &end, &part) || part > 255 || end == s)
            return false;
        v = v << 8 | (u32)part;
        if (i < 3 && *end != '.')
            return false;
        s = end + 1;
        if (i == 3 && *end && *end != ' ')
            return false;
    }
    *ip = v;
    return true;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool parse_mac(const char *s, u8 mac[6])
{
    for (int i = 0; i < 6; i++) {
        int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);
        if (lo < 0 || (i < 5 && s[2] != ':'))
            return false;
        mac[i] = (u8)(hi << 4 | lo);
        s += 3;
    }
    return true;
}
