/*
 * vnet's frames: Ethernet II, IPv4 (no options, DF, TTL 64), UDP with
 * its checksum over the pseudo-header, and a payload that carries a magic,
 * the sequence number and a pattern derived from it, so every byte of an
 * echo can be checked without keeping what was sent. No offloads: the
 * device is offered whole, checksummed frames (virtio-net without CSUM).
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

static u8 pattern(u32 seq, u32 i) { return (u8)((seq + i) * 131u + (i >> 8)); }

u32 frame_build(u8 *f, const struct endpoint *src, const struct endpoint *dst, u32 seq, u32 size)
{
    if (size < VNET_PAYLOAD_MIN)
        size = VNET_PAYLOAD_MIN;
    if (size > UDP_MAX_PAYLOAD)
        size = UDP_MAX_PAYLOAD;
    u8 *ip = f + ETH_HLEN, *udp = ip + IP_HLEN, *pl = udp + UDP_HLEN;
    memcpy(f, dst->mac, 6);
    memcpy(f + 6, src->mac, 6);
    put16(f + 12, 0x0800);
    ip[0] = 0x45;
    ip[1] = 0;
    put16(ip + 2, (u16)(IP_HLEN + UDP_HLEN + size));
    put16(ip + 4, (u16)seq);
    put16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = 17;
    put16(ip + 10, 0);
    put32(ip + 12, src->ip);
    put32(ip + 16, dst->ip);
    put16(ip + 10, inet_csum(ip, IP_HLEN, 0));
    put16(udp, src->port);
    put16(udp + 2, dst->port);
    put16(udp + 4, (u16)(UDP_HLEN + size));
    put16(udp + 6, 0);
    put32(pl, VNET_MAGIC);
    put32(pl + 4, seq);
    for (u32 i = VNET_PAYLOAD_MIN; i < size; i++)
        pl[i] = pattern(seq, i);
    u16 c = inet_csum(udp, UDP_HLEN + size, pseudo_sum(src->ip, dst->ip, (u16)(UDP_HLEN + size)));
    put16(udp + 6, c ? c : 0xffff); /* 0 would mean "no checksum" */
    return ETH_HLEN + IP_HLEN + UDP_HLEN + size;
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

bool frame_is_reply(const u8 *f, u32 len, const struct endpoint *self, const struct endpoint *peer, u32 seq,
                    u32 size)
{
    if (size < VNET_PAYLOAD_MIN)
        size = VNET_PAYLOAD_MIN;
    if (size > UDP_MAX_PAYLOAD)
        size = UDP_MAX_PAYLOAD;
    const u8 *ip = f + ETH_HLEN, *udp = ip + IP_HLEN, *pl = udp + UDP_HLEN;
    /* A frame shorter than 60 bytes is padded on the wire: the IP length says what counts. */
    if (len < FRAME_HDRS + size || memcmp(f, self->mac, 6) || memcmp(f + 6, peer->mac, 6))
        return false;
    if (get16(ip + 2) != IP_HLEN + UDP_HLEN + size || inet_csum(ip, IP_HLEN, 0) != 0)
        return false;
    if (get32(ip + 12) != peer->ip || get32(ip + 16) != self->ip)
        return false;
    if (get16(udp) != peer->port || get16(udp + 2) != self->port || get16(udp + 4) != UDP_HLEN + size)
        return false;
    if (get16(udp + 6) &&
        inet_csum(udp, UDP_HLEN + size, pseudo_sum(peer->ip, self->ip, (u16)(UDP_HLEN + size))) != 0)
        return false;
    if (get32(pl) != VNET_MAGIC || get32(pl + 4) != seq)
        return false;
    for (u32 i = VNET_PAYLOAD_MIN; i < size; i++)
        if (pl[i] != pattern(seq, i))
            return false;
    return true;
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
