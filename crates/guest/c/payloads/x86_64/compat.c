/*
 * Checks the machine interfaces kvm-unit-tests binaries rely on (spec
 * docs: ../shared/specs/kvm-unit-tests-machine.md from the repository's
 * root, §2-§3), one check at a time, each reported as a kvm-unit-tests
 * style "PASS: <check>" or "FAIL: <check>: <why>" line plus a COUNT ucall
 * (args[0] = check index, args[1] = 1 pass / 0 fail, text = check name).
 *
 * Command line: check names as bare words (default: all, in table order),
 * and cpus=<N> (default 1), mem=<MiB> (optional), tsc_khz=<kHz> (optional).
 * Exit 0 when every selected check passed, 1 otherwise.
 */
#include "rt.h"

#define WAIT_CYCLES (1ULL << 33) /* AP bring-up bound, as the smp payload */
#define PM_TIMER_HZ 3579545ULL
#define PM_TIMER_MASK 0xffffffu

struct check {
    const char *name;
    bool (*run)(void);
};

static char why[160]; /* the current check's failure reason */
static u64 want_cpus;

#define fail(...)                                                                                \
    ({                                                                                           \
        snprintf(why, sizeof(why), __VA_ARGS__);                                                 \
        false;                                                                                   \
    })

/* A key=value word, not a check name. */
static bool is_option(const char *w)
{
    for (; *w; w++)
        if (*w == '=')
            return true;
    return false;
}

/* A table signature as a string (printf has no precision); a few rotating buffers. */
static const char *sig_str(u32 sig)
{
    static char buf[4][5];
    static unsigned next;
    char *b = buf[next++ % 4];
    for (int k = 0; k < 4; k++) {
        char c = (char)(sig >> (8 * k));
        b[k] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    b[4] = '\0';
    return b;
}

static u32 rd32(const u8 *p) { return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24; }
static u64 rd64(const u8 *p) { return rd32(p) | (u64)rd32(p + 4) << 32; }

/* ---- fwcfg ---- */

static bool check_fwcfg(void)
{
    char sig[5] = { 0 };
    fwcfg_read_bytes(FW_CFG_SIGNATURE, sig, 4);
    if (memcmp(sig, "QEMU", 4))
        return fail("key 0x00 reads %02x %02x %02x %02x, not \"QEMU\"", (u8)sig[0], (u8)sig[1], (u8)sig[2],
                    (u8)sig[3]);
    u32 id = (u32)fwcfg_read(FW_CFG_ID, 4);
    u64 cpus = fwcfg_read(FW_CFG_NB_CPUS, 2);
    u64 ram = fwcfg_read(FW_CFG_RAM_SIZE, 8);
    u64 max_ram = fwcfg_read(FW_CFG_MAX_RAM, 8);
    printf("INFO: fwcfg: signature QEMU id 0x%x nb_cpus %lu ram_size 0x%lx key 0x11 0x%lx\n", id, cpus, ram,
           max_ram);
    if (!(id & 1))
        return fail("key 0x01 = 0x%x lacks bit 0 (traditional interface)", id);
    if (cpus != want_cpus)
        return fail("key 0x05 nb_cpus = %lu, cmdline cpus=%lu", cpus, want_cpus);
    u64 mib = cmdline_u64("mem", 0);
    if (mib && ram != mib << 20)
        return fail("key 0x03 ram_size = 0x%lx, cmdline mem=%lu MiB is 0x%lx", ram, mib, mib << 20);
    return true;
}

/* ---- acpi ---- */

static u16 pm_tmr_blk; /* from the FADT, for pmtimer */

/* Checksum, length and signature of the table at addr; NULL (and why) if bad. */
static const struct acpi_header *valid_table(u64 addr, const char *via)
{
    if (!addr || addr >= 0x100000000ULL) {
        fail("%s points at 0x%lx, outside the low 4 GiB", via, addr);
        return NULL;
    }
    const struct acpi_header *t = (const struct acpi_header *)(uintptr_t)addr;
    const char *s = sig_str(t->signature);
    if (t->length < sizeof(*t) || t->length > 0x100000) {
        fail("%s at 0x%lx (via %s): bad length %u", s, addr, via, t->length);
        return NULL;
    }
    if (acpi_sum(t, t->length)) {
        fail("%s at 0x%lx (via %s): bad checksum", s, addr, via);
        return NULL;
    }
    return t;
}

/* The tables the RSDT/XSDT list, checked; the ones we need picked out. */
struct acpi_found {
    const struct acpi_header *facp, *madt, *mcfg;
};

static bool walk_sdt(const struct acpi_header *sdt, unsigned width, struct acpi_found *f)
{
    const char *via = width == 8 ? "XSDT" : "RSDT";
    if ((sdt->length - sizeof(*sdt)) % width)
        return fail("%s length %u is not a whole number of entries", via, sdt->length);
    for (u32 off = sizeof(*sdt); off + width <= sdt->length; off += width) {
        const u8 *e = (const u8 *)sdt + off;
        const struct acpi_header *t = valid_table(width == 8 ? rd64(e) : rd32(e), via);
        if (!t)
            return false;
        if (t->signature == ACPI_SIG('F', 'A', 'C', 'P') && !f->facp)
            f->facp = t;
        else if (t->signature == ACPI_SIG('A', 'P', 'I', 'C') && !f->madt)
            f->madt = t;
        else if (t->signature == ACPI_SIG('M', 'C', 'F', 'G') && !f->mcfg)
            f->mcfg = t;
    }
    return true;
}

/* Enabled processors in the MADT: type 0 (xAPIC) and type 9 (x2APIC) entries with flags bit 0. */
static bool madt_cpus(const struct acpi_header *madt, u32 *count)
{
    const u8 *p = (const u8 *)madt;
    *count = 0;
    for (u32 off = 44; off < madt->length;) {
        u8 type = p[off], len = p[off + 1];
        if (len < 2 || off + len > madt->length)
            return fail("MADT entry at +%u (type %u) has bad length %u", off, type, len);
        if (type == 0 && len >= 8 && (rd32(p + off + 4) & 1))
            (*count)++;
        if (type == 9 && len >= 16 && (rd32(p + off + 8) & 1))
            (*count)++;
        off += len;
    }
    return true;
}

static bool check_acpi(void)
{
    const u8 *rsdp = acpi_find_rsdp();
    if (!rsdp)
        return fail("no \"RSD PTR \" at 16-byte steps in 0xE0000-0xFFFFF");
    u8 rev = rsdp[15];
    if (acpi_sum(rsdp, 20))
        return fail("RSDP at %p: bad checksum", rsdp);
    if (rev >= 2) {
        u32 len = rd32(rsdp + 20);
        if (len < 36 || len > 4096)
            return fail("RSDP rev %u: bad length %u", rev, len);
        if (acpi_sum(rsdp, len))
            return fail("RSDP rev %u: bad extended checksum", rev);
    }
    printf("INFO: acpi: RSDP at %p rev %u\n", rsdp, rev);

    struct acpi_found rf = { 0 }, xf = { 0 };
    const struct acpi_header *rsdt = valid_table(rd32(rsdp + 16), "RSDP");
    if (!rsdt)
        return false;
    if (rsdt->signature != ACPI_SIG('R', 'S', 'D', 'T'))
        return fail("RSDP's RSDT pointer leads to %s", sig_str(rsdt->signature));
    if (!walk_sdt(rsdt, 4, &rf))
        return false;
    struct acpi_found *f = &rf;
    if (rev >= 2 && rd64(rsdp + 24)) {
        const struct acpi_header *xsdt = valid_table(rd64(rsdp + 24), "RSDP");
        if (!xsdt)
            return false;
        if (xsdt->signature != ACPI_SIG('X', 'S', 'D', 'T'))
            return fail("RSDP's XSDT pointer leads to %s", sig_str(xsdt->signature));
        if (!walk_sdt(xsdt, 8, &xf))
            return false;
        if (!!xf.facp != !!rf.facp || !!xf.madt != !!rf.madt || !!xf.mcfg != !!rf.mcfg)
            return fail("RSDT and XSDT list different tables");
        f = &xf; /* what an ACPI 2.0 OS (and kvm-unit-tests) uses */
    }

    if (!f->facp)
        return fail("no FACP");
    if (f->facp->length < 80)
        return fail("FACP length %u has no PM_TMR_BLK", f->facp->length);
    const u8 *facp = (const u8 *)f->facp;
    u32 dsdt = rd32(facp + 40), tmr = rd32(facp + ACPI_FADT_PM_TMR_BLK);
    if (dsdt) {
        const struct acpi_header *d = valid_table(dsdt, "FACP");
        if (!d)
            return false;
        if (d->signature != ACPI_SIG('D', 'S', 'D', 'T'))
            return fail("FACP's DSDT pointer leads to %s", sig_str(d->signature));
    }
    if (!tmr || tmr > 0xfffc)
        return fail("FACP PM_TMR_BLK = 0x%x", tmr);
    pm_tmr_blk = (u16)tmr;

    if (!f->madt)
        return fail("no APIC (MADT)");
    u32 cpus;
    if (!madt_cpus(f->madt, &cpus))
        return false;
    if (cpus != want_cpus)
        return fail("MADT lists %u enabled local APICs, cmdline cpus=%lu", cpus, want_cpus);

    if (f->mcfg) {
        if (f->mcfg->length < 60)
            return fail("MCFG length %u has no allocation", f->mcfg->length);
        const u8 *m = (const u8 *)f->mcfg;
        u64 base = rd64(m + 44);
        u8 first = m[54], last = m[55];
        printf("INFO: acpi: MCFG ECAM base 0x%lx segment %u buses %u-%u%s\n", base, m[52] | m[53] << 8, first,
               last, base == ECAM_BASE ? "" : " (not trapline's ECAM_BASE)");
        if (base & 0xfffff || last < first)
            return fail("MCFG allocation base 0x%lx buses %u-%u is malformed", base, first, last);
    } else {
        printf("INFO: acpi: no MCFG\n");
    }
    printf("INFO: acpi: PM_TMR_BLK 0x%x, %u local APICs\n", pm_tmr_blk, cpus);
    return true;
}

/* ---- pmtimer ---- */

/* TSC kHz: tsc_khz= on the command line, else the hypervisor timing leaf 0x40000010 if offered. */
static u64 tsc_khz(void)
{
    u64 khz = cmdline_u64("tsc_khz", 0);
    u32 r[4];
    if (khz)
        return khz;
    cpuid(1, 0, r);
    if (!(r[2] & (1u << 31)))
        return 0;
    cpuid(0x40000000, 0, r);
    if (r[0] < 0x40000010)
        return 0;
    cpuid(0x40000010, 0, r);
    return r[0];
}

static bool check_pmtimer(void)
{
    if (!pm_tmr_blk) {
        const struct acpi_header *facp = acpi_find_table(ACPI_SIG('F', 'A', 'C', 'P'));
        if (!facp)
            return fail("no FACP to find PM_TMR_BLK in");
        pm_tmr_blk = (u16)rd32((const u8 *)facp + ACPI_FADT_PM_TMR_BLK);
        if (!pm_tmr_blk)
            return fail("FACP PM_TMR_BLK is 0");
    }
    u16 port = pm_tmr_blk;

    /* 24 bits, and moving. */
    u32 prev = inl(port), changes = 0;
    for (int k = 0; k < 32; k++) {
        u32 v = inl(port);
        if (v & ~PM_TIMER_MASK)
            return fail("port 0x%x read 0x%x: bits above 23 set", port, v);
        changes += v != prev;
        prev = v;
    }
    if (!changes)
        return fail("port 0x%x reads 0x%x 33 times in a row", port, prev);

    /* Rate over a TSC interval, each end bracketed by two TSC reads. */
    u64 khz = tsc_khz();
    if (!khz) {
        printf("INFO: pmtimer: port 0x%x, 24-bit, advancing; no tsc_khz=, rate not checked\n", port);
        return true;
    }
    u64 interval = khz * 200; /* 200 ms */
    u64 a0 = rdtsc_ordered();
    u32 p0 = inl(port);
    u64 a1 = rdtsc_ordered();
    u64 b0, b1;
    u32 p1;
    u32 ticks = 0, last = p0;
    do {
        /* Keep reading so a wrap (every 4.7 s) cannot be missed. */
        b0 = rdtsc_ordered();
        p1 = inl(port);
        b1 = rdtsc_ordered();
        ticks += (p1 - last) & PM_TIMER_MASK;
        last = p1;
    } while (b0 - a0 < interval);
    u64 cycles = (b0 + b1) / 2 - (a0 + a1) / 2;
    /* Hz = ticks / (cycles / (khz * 1000)). */
    u64 hz = (u64)ticks * khz * 1000 / cycles;
    printf("INFO: pmtimer: port 0x%x: %u ticks in %lu TSC cycles at %lu kHz = %lu Hz\n", port, ticks, cycles, khz,
           hz);
    if (hz < PM_TIMER_HZ * 95 / 100 || hz > PM_TIMER_HZ * 105 / 100)
        return fail("rate %lu Hz is not 3579545 Hz +-5%%", hz);
    return true;
}

/* ---- pctestdev ---- */

static bool check_pctestdev(void)
{
    /* 0xE0: 32-bit scratch register, every width, lanes by port & 3. */
    outl(0xe0, 0x12345678);
    u32 v = inl(0xe0);
    if (v == 0xffffffff)
        return fail("nothing at port 0xe0 (it reads all-ones): the machine has no pc-testdev; "
                    "add it with --device pc-testdev (QEMU: -device pc-testdev)");
    if (v != 0x12345678)
        return fail("0xe0: outl 0x12345678, inl 0x%x", v);
    for (u16 p = 0; p < 4; p++)
        outb(0xe0 + p, (u8)(0xa0 + p));
    if ((v = inl(0xe0)) != 0xa3a2a1a0)
        return fail("0xe0: outb 0xa0..0xa3 to 0xe0..0xe3, inl 0x%x", v);
    for (u16 p = 0; p < 4; p++)
        if ((v = inb(0xe0 + p)) != 0xa0u + p)
            return fail("0xe0: inb 0x%x = 0x%x, expected 0x%x", 0xe0 + p, v, 0xa0 + p);
    outw(0xe0, 0xbeef);
    outw(0xe2, 0xdead);
    if ((v = inl(0xe0)) != 0xdeadbeef)
        return fail("0xe0: outw 0xbeef, 0xdead to 0xe0, 0xe2, inl 0x%x", v);
    if ((v = inw(0xe0)) != 0xbeef || (v = inw(0xe2)) != 0xdead)
        return fail("0xe0: inw reads 0x%x", v);

    /* 0xE8: the same register, byte by byte. */
    outl(0xe8, 0xcafef00d);
    if ((v = inl(0xe8)) != 0xcafef00d)
        return fail("0xe8: outl 0xcafef00d, inl 0x%x", v);
    if ((v = inl(0xe0)) != 0xcafef00d)
        return fail("0xe8 is not an alias of 0xe0: inl 0xe0 = 0x%x", v);
    for (u16 p = 0; p < 4; p++)
        outb(0xe8 + p, (u8)(0x10 + p));
    if ((v = inl(0xe0)) != 0x13121110)
        return fail("0xe8: outb 0x10..0x13 to 0xe8..0xeb, inl 0xe0 = 0x%x", v);
    if ((v = inb(0xea)) != 0x12)
        return fail("0xe8: inb 0xea = 0x%x", v);
    return true;
}

/* ---- lapic ---- */

static bool check_lapic(void)
{
    u64 base = rdmsr(MSR_APIC_BASE);
    u32 id = lapic_id();
    if (!(base & APIC_BASE_EN) || (base & APIC_BASE_EXTD) || (base & ~0xfffULL) != LAPIC_BASE)
        return fail("IA32_APIC_BASE = 0x%lx: not an enabled xAPIC at 0x%lx", base, (u64)LAPIC_BASE);

    wrmsr(MSR_APIC_BASE, base & ~(u64)APIC_BASE_EN);
    u32 lvr = mmio_read32(LAPIC_BASE + APIC_LVR);
    u32 tpr = mmio_read32(LAPIC_BASE + APIC_TPR);
    mmio_write32(LAPIC_BASE + APIC_TPR, 0x12345678);
    mmio_write32(LAPIC_BASE + APIC_LVR, 0);
    u32 tpr2 = mmio_read32(LAPIC_BASE + APIC_TPR);
    u32 lvr2 = mmio_read32(LAPIC_BASE + APIC_LVR);
    wrmsr(MSR_APIC_BASE, base);
    lapic_enable();

    u32 id2 = lapic_id();
    if (lvr != 0xffffffff || tpr != 0xffffffff)
        return fail("APIC disabled: LVR 0x%x TPR 0x%x, expected 0xffffffff", lvr, tpr);
    if (lvr2 != 0xffffffff || tpr2 != 0xffffffff)
        return fail("APIC disabled: after writes LVR 0x%x TPR 0x%x, expected 0xffffffff", lvr2, tpr2);
    if (id2 != id || rdmsr(MSR_APIC_BASE) != base)
        return fail("re-enabled APIC: id %u (was %u), APIC_BASE 0x%lx", id2, id, rdmsr(MSR_APIC_BASE));
    return true;
}

/* ---- smp ---- */

static volatile u32 ap_online;

void ap_main(u32 cpu, u32 apic_id)
{
    (void)cpu;
    (void)apic_id;
    __atomic_fetch_add(&ap_online, 1, __ATOMIC_RELEASE);
}

static bool smp_started;

static bool check_smp(void)
{
    u64 n = fwcfg_read(FW_CFG_NB_CPUS, 2);
    if (n == 0 || n > MAX_CPUS)
        return fail("fw_cfg key 0x05 nb_cpus = %lu (this payload handles 1..%u)", n, MAX_CPUS);
    if (smp_started)
        return fail("APs were already started");
    smp_started = true;
    /* Like kvm-unit-tests: INIT + SIPI to all-but-self, then wait for exactly nb_cpus - 1 APs. */
    smp_start_aps();
    u64 t0 = rdtsc_ordered(), elapsed = 0;
    while (__atomic_load_n(&ap_online, __ATOMIC_ACQUIRE) < n - 1) {
        elapsed = rdtsc_ordered() - t0;
        if (elapsed > WAIT_CYCLES)
            return fail("%u of %lu APs came online in %lu TSC cycles", ap_online, n - 1, elapsed);
        cpu_relax();
    }
    /* Then as long again (at least 2^28 cycles) to catch CPUs fw_cfg does not count. */
    u64 settle = elapsed > (1ULL << 28) ? elapsed : (1ULL << 28), t1 = rdtsc_ordered();
    while (rdtsc_ordered() - t1 < settle)
        cpu_relax();
    u32 k = __atomic_load_n(&ap_online, __ATOMIC_ACQUIRE);
    if (k != n - 1)
        return fail("%u APs came online, fw_cfg nb_cpus says %lu CPUs", k, n);
    printf("INFO: smp: %lu cpus online\n", n);
    return true;
}

/* ---- driver ---- */

/* The index of each check is its position here (COUNT args[0]); the names are the cmdline words. */
static const struct check checks[] = {
    { "fwcfg", check_fwcfg },         { "acpi", check_acpi }, { "pmtimer", check_pmtimer },
    { "pctestdev", check_pctestdev }, { "lapic", check_lapic }, { "smp", check_smp },
};

static bool wanted(const char *name, int argc, char **argv)
{
    bool any = false;
    for (int a = 1; a < argc; a++) {
        if (is_option(argv[a]))
            continue;
        any = true;
        if (!strcmp(argv[a], name))
            return true;
    }
    return !any;
}

static int passed, failed;

static void report(u32 index, const char *name, bool ok)
{
    if (ok)
        printf("PASS: %s\n", name);
    else
        printf("FAIL: %s: %s\n", name, why);
    ucall(UCALL_COUNT, name, index, ok ? 1 : 0);
    if (ok)
        passed++;
    else
        failed++;
}

int main(int argc, char **argv)
{
    want_cpus = cmdline_u64("cpus", 1);

    /* Unknown words are failures, so a typo cannot pass silently. */
    for (int a = 1; a < argc; a++) {
        if (is_option(argv[a]))
            continue;
        bool known = false;
        for (size_t k = 0; k < ARRAY_SIZE(checks); k++)
            known |= !strcmp(argv[a], checks[k].name);
        if (!known) {
            snprintf(why, sizeof(why), "unknown check (known: fwcfg acpi pmtimer pctestdev lapic smp)");
            report((u32)ARRAY_SIZE(checks), argv[a], false);
        }
    }
    for (size_t k = 0; k < ARRAY_SIZE(checks); k++) {
        if (!wanted(checks[k].name, argc, argv))
            continue;
        why[0] = '\0';
        report((u32)k, checks[k].name, checks[k].run());
    }
    printf("SUMMARY: %d tests, %d unexpected failures\n", passed + failed, failed);
    finish(failed ? 1 : 0);
}
