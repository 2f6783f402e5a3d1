/*
 * QEMU's fw_cfg through its legacy ports, exactly as kvm-unit-tests reads
 * it: a 16-bit OUT of the key to 0x510 (which rewinds the item), then one
 * 8-bit IN from 0x511 per byte, little-endian. Callers serialise (the
 * payloads only read it from the BSP).
 */
#include "rt.h"

void fwcfg_read_bytes(u16 key, void *buf, unsigned len)
{
    u8 *b = buf;
    outw(FW_CFG_PORT_SEL, key);
    for (unsigned i = 0; i < len; i++)
        b[i] = inb(FW_CFG_PORT_DATA);
}

u64 fwcfg_read(u16 key, unsigned len)
{
    u8 b[8] = { 0 };
    u64 v = 0;
    if (len > sizeof(b))
        len = sizeof(b);
    fwcfg_read_bytes(key, b, len);
    for (unsigned i = 0; i < len; i++)
        v |= (u64)b[i] << (8 * i);
    return v;
}
