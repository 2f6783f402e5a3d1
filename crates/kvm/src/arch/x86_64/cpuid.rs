//! Per-vCPU CPUID and CPU models (`--cpu host|max|qemu64[,+flag,-flag]`).
//!
//! `host` and `max` both mean everything KVM supports on this host
//! (KVM_GET_SUPPORTED_CPUID: there is no emulated-only feature to add as
//! QEMU's TCG `max` would); `qemu64` masks that down to QEMU's qemu64 model
//! (SSE2-era: leaf 1 EDX's base set, SSE3 and CX16, the 64-bit extended
//! bits, no leaf-7 features) and its identity (family 15, model 107,
//! stepping 1, "QEMU Virtual CPU version 2.5+"), keeping what KVM itself
//! provides on every model (x2APIC, the hypervisor bit and KVM's paravirtual
//! leaves 0x40000000-0x40000001 with kvm-clock; every model gets QEMU's
//! default paravirtual feature set, see [`QEMU_DEFAULT_KVM_FEATURES`]). Then each `+flag`/`-flag`
//! sets or clears one named bit, for a feature a guest or a host cannot
//! handle (`qemu64,-cx16`).

use kvm_bindings::kvm_cpuid_entry2;

/// Patch the host's supported CPUID for one vCPU: its APIC ID goes into
/// leaf 1 EBX\[31:24\] and into EDX of every subleaf of leaves 0xB and 0x1F
/// (x2APIC topology). KVM_GET_SUPPORTED_CPUID reports the host CPU's own IDs
/// there, which guests (kvm-unit-tests' apic test among them) check against
/// the APIC they see.
pub fn patch_for_vcpu(entries: &mut [kvm_cpuid_entry2], apic_id: u32) {
    for e in entries.iter_mut() {
        match e.function {
            1 => e.ebx = (e.ebx & 0x00ff_ffff) | ((apic_id & 0xff) << 24),
            0xb | 0x1f => e.edx = apic_id,
            _ => {}
        }
    }
}

/// The CPU vendor string from leaf 0 ("GenuineIntel", "AuthenticAMD", …).
pub fn vendor(entries: &[kvm_cpuid_entry2]) -> Option<String> {
    let e = entries.iter().find(|e| e.function == 0)?;
    let mut v = Vec::with_capacity(12);
    for r in [e.ebx, e.edx, e.ecx] {
        v.extend_from_slice(&r.to_le_bytes());
    }
    String::from_utf8(v).ok()
}

/// A CPU model base.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuBase {
    /// Everything KVM supports (the default).
    #[default]
    Host,
    /// Same as `host` under KVM.
    Max,
    /// QEMU's qemu64.
    Qemu64,
}

/// A CPU model: a base and feature edits, applied in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuModel {
    /// The base model.
    pub base: CpuBase,
    /// `(feature name, on)` edits.
    pub edits: Vec<(&'static str, bool)>,
}

/// Which CPUID register a feature bit lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reg {
    Ebx,
    Ecx,
    Edx,
}

/// Named feature bits: (name as QEMU spells it, leaf, register, bit).
/// Leaf 7 is subleaf 0.
const FEATURES: &[(&str, u32, Reg, u32)] = &[
    ("sse3", 1, Reg::Ecx, 0),
    ("pclmulqdq", 1, Reg::Ecx, 1),
    ("monitor", 1, Reg::Ecx, 3),
    ("vmx", 1, Reg::Ecx, 5),
    ("ssse3", 1, Reg::Ecx, 9),
    ("fma", 1, Reg::Ecx, 12),
    ("cx16", 1, Reg::Ecx, 13),
    ("pcid", 1, Reg::Ecx, 17),
    ("sse4.1", 1, Reg::Ecx, 19),
    ("sse4.2", 1, Reg::Ecx, 20),
    ("x2apic", 1, Reg::Ecx, 21),
    ("movbe", 1, Reg::Ecx, 22),
    ("popcnt", 1, Reg::Ecx, 23),
    ("tsc-deadline", 1, Reg::Ecx, 24),
    ("aes", 1, Reg::Ecx, 25),
    ("xsave", 1, Reg::Ecx, 26),
    ("avx", 1, Reg::Ecx, 28),
    ("f16c", 1, Reg::Ecx, 29),
    ("rdrand", 1, Reg::Ecx, 30),
    ("hypervisor", 1, Reg::Ecx, 31),
    ("fpu", 1, Reg::Edx, 0),
    ("tsc", 1, Reg::Edx, 4),
    ("msr", 1, Reg::Edx, 5),
    ("pae", 1, Reg::Edx, 6),
    ("cx8", 1, Reg::Edx, 8),
    ("apic", 1, Reg::Edx, 9),
    ("sep", 1, Reg::Edx, 11),
    ("mtrr", 1, Reg::Edx, 12),
    ("pge", 1, Reg::Edx, 13),
    ("cmov", 1, Reg::Edx, 15),
    ("pat", 1, Reg::Edx, 16),
    ("clflush", 1, Reg::Edx, 19),
    ("mmx", 1, Reg::Edx, 23),
    ("fxsr", 1, Reg::Edx, 24),
    ("sse", 1, Reg::Edx, 25),
    ("sse2", 1, Reg::Edx, 26),
    ("fsgsbase", 7, Reg::Ebx, 0),
    ("bmi1", 7, Reg::Ebx, 3),
    ("hle", 7, Reg::Ebx, 4),
    ("avx2", 7, Reg::Ebx, 5),
    ("smep", 7, Reg::Ebx, 7),
    ("bmi2", 7, Reg::Ebx, 8),
    ("erms", 7, Reg::Ebx, 9),
    ("invpcid", 7, Reg::Ebx, 10),
    ("rtm", 7, Reg::Ebx, 11),
    ("avx512f", 7, Reg::Ebx, 16),
    ("rdseed", 7, Reg::Ebx, 18),
    ("adx", 7, Reg::Ebx, 19),
    ("smap", 7, Reg::Ebx, 20),
    ("clflushopt", 7, Reg::Ebx, 23),
    ("sha-ni", 7, Reg::Ebx, 29),
    ("umip", 7, Reg::Ecx, 2),
    ("pku", 7, Reg::Ecx, 3),
    ("rdpid", 7, Reg::Ecx, 22),
    ("lahf-lm", 0x8000_0001, Reg::Ecx, 0),
    ("svm", 0x8000_0001, Reg::Ecx, 2),
    ("abm", 0x8000_0001, Reg::Ecx, 5),
    ("syscall", 0x8000_0001, Reg::Edx, 11),
    ("nx", 0x8000_0001, Reg::Edx, 20),
    ("pdpe1gb", 0x8000_0001, Reg::Edx, 26),
    ("rdtscp", 0x8000_0001, Reg::Edx, 27),
    ("lm", 0x8000_0001, Reg::Edx, 29),
    ("invtsc", 0x8000_0007, Reg::Edx, 8),
];

/// Invariant TSC (0x80000007 EDX bit 8): hidden unless `+invtsc`, as QEMU
/// hides it from every model unless asked (it blocks migration there), so a
/// guest sees the same TSC promises on both VMMs.
const INVTSC: (u32, u32) = (0x8000_0007, 1 << 8);

/// KVM's paravirtual feature leaf.
pub const KVM_CPUID_FEATURES: u32 = 0x4000_0001;

/// The paravirtual features QEMU enables by default (its `kvm_default_props`
/// and the `kvmclock` feature word): kvm-clock (both MSR sets) with its
/// stable bit, no-op port-0x80 delay, async page faults (with their
/// interrupt), steal time, PV EOI. KVM_GET_SUPPORTED_CPUID offers more
/// (PV spinlock unhalt, PV IPIs and TLB flushes, poll control, …), which make
/// the guest depend on hypercalls and on the host scheduling its vCPUs
/// together; an SMP Linux guest stalled in its AP bring-up with all of them.
pub const QEMU_DEFAULT_KVM_FEATURES: u32 = (1 << 0) // KVM_FEATURE_CLOCKSOURCE
    | (1 << 1) // NOP_IO_DELAY
    | (1 << 3) // CLOCKSOURCE2
    | (1 << 4) // ASYNC_PF
    | (1 << 5) // STEAL_TIME
    | (1 << 6) // PV_EOI
    | (1 << 14) // ASYNC_PF_INT
    | (1 << 24); // CLOCKSOURCE_STABLE_BIT

/// Limits KVM's paravirtual features (leaf 0x40000001 EAX) to
/// [`QEMU_DEFAULT_KVM_FEATURES`]; the signature leaf 0x40000000
/// ("KVMKVMKVM") is KVM's own.
pub fn qemu_default_kvm_features(entries: &mut [kvm_cpuid_entry2]) {
    for e in entries
        .iter_mut()
        .filter(|e| e.function == KVM_CPUID_FEATURES)
    {
        e.eax &= QEMU_DEFAULT_KVM_FEATURES;
    }
}

/// The feature names `+flag`/`-flag` accept.
pub fn feature_names() -> impl Iterator<Item = &'static str> {
    FEATURES.iter().map(|f| f.0)
}

/// qemu64's leaf 1 EDX: fpu de pse tsc msr pae mce cx8 apic sep mtrr pge
/// mca cmov pat pse36 clflush mmx fxsr sse sse2.
const QEMU64_1_EDX: u32 = 0x0789_fbff;
/// qemu64's leaf 1 ECX (sse3, cx16) plus what QEMU adds to it under KVM
/// (x2apic, hypervisor). Not the TSC-deadline timer: QEMU's qemu64 has none,
/// so a Linux guest drives its periodic tick with the LAPIC timer's periodic
/// mode there instead of re-arming a one-shot deadline (a WRMSR exit) at
/// every tick; `+tsc-deadline` brings it back.
const QEMU64_1_ECX: u32 = (1 << 0) | (1 << 13) | (1 << 21) | (1 << 31);
/// qemu64's leaf 1 EAX: family 15, model 107 (extended model 6, model 0xB),
/// stepping 1, as QEMU's model reports them. The host's family and model
/// would make Linux load model-specific drivers the peer's guest never
/// loads (the RAPL PMU, whose probe reads MSRs, on a family-6 host).
const QEMU64_1_EAX: u32 = (0x6 << 16) | (0xf << 8) | (0xb << 4) | 0x1;
/// qemu64's brand string (leaves 0x80000002-0x80000004), as QEMU's.
pub const QEMU64_MODEL_ID: &str = "QEMU Virtual CPU version 2.5+";
/// The brand-string leaves.
pub const BRAND_LEAVES: [u32; 3] = [0x8000_0002, 0x8000_0003, 0x8000_0004];

/// `id` as the 48 bytes of the brand leaves (NUL-padded), one leaf's EAX,
/// EBX, ECX, EDX per 16 bytes.
fn brand_words(id: &str) -> [[u32; 4]; 3] {
    let mut bytes = [0u8; 48];
    let n = id.len().min(47);
    bytes[..n].copy_from_slice(&id.as_bytes()[..n]);
    std::array::from_fn(|leaf| {
        std::array::from_fn(|reg| {
            let at = leaf * 16 + reg * 4;
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        })
    })
}
/// qemu64's 0x80000001 EDX: syscall, nx, lm (and the AMD copies of leaf 1's
/// low bits, which the EDX mask above already bounds).
const QEMU64_EXT_EDX: u32 = QEMU64_1_EDX & 0x0183_f3ff | (1 << 11) | (1 << 20) | (1 << 29);
/// qemu64's 0x80000001 ECX: lahf_lm (svm only where the host has it, as
/// QEMU's model asks for it).
const QEMU64_EXT_ECX: u32 = (1 << 0) | (1 << 2);

impl CpuModel {
    /// Parses `host`, `max`, `qemu64`, each optionally followed by
    /// `,+flag` / `,-flag` / `,flag=on|off` items (QEMU's `-cpu` spelling).
    pub fn parse(spec: &str) -> Result<CpuModel, String> {
        // Refused outright here (parse_lenient falls back to host).
        let base = spec.split(',').next().unwrap_or("").trim();
        if !matches!(base, "host" | "max" | "qemu64") {
            return Err(format!(
                "unknown CPU model '{base}': trapline has host, max and qemu64"
            ));
        }
        let (model, ignored) = Self::parse_lenient(spec);
        match ignored.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(model),
        }
    }

    /// Like [`CpuModel::parse`], but what trapline does not model (another
    /// model name, `vendor=…`, an unknown flag) is skipped and described in
    /// the returned list instead: QEMU-spelling harnesses pass models and
    /// properties trapline has no use for, and must still run.
    pub fn parse_lenient(spec: &str) -> (CpuModel, Vec<String>) {
        let mut ignored = Vec::new();
        let mut items = spec.split(',');
        let base = match items.next().unwrap_or("").trim() {
            "host" => CpuBase::Host,
            "max" => CpuBase::Max,
            "qemu64" => CpuBase::Qemu64,
            other => {
                ignored.push(format!(
                    "CPU model '{other}': trapline has host, max and qemu64 (using host)"
                ));
                CpuBase::Host
            }
        };
        let mut edits = Vec::new();
        for item in items {
            match Self::edit(item) {
                Ok(e) => edits.push(e),
                Err(e) => ignored.push(e),
            }
        }
        (CpuModel { base, edits }, ignored)
    }

    /// One `+flag`, `-flag` or `flag=on|off` item.
    fn edit(item: &str) -> Result<(&'static str, bool), String> {
        {
            let (name, on) = if let Some(n) = item.strip_prefix('+') {
                (n, true)
            } else if let Some(n) = item.strip_prefix('-') {
                (n, false)
            } else if let Some((n, v)) = item.split_once('=') {
                match v {
                    "on" | "true" | "yes" => (n, true),
                    "off" | "false" | "no" => (n, false),
                    _ => return Err(format!("'{item}': expected {n}=on or {n}=off")),
                }
            } else {
                return Err(format!("'{item}': expected +flag, -flag or flag=on|off"));
            };
            // QEMU accepts both spellings of some names.
            let name = name.replace('_', "-");
            let name = match name.as_str() {
                "sse4-1" => "sse4.1",
                "sse4-2" => "sse4.2",
                n => n,
            };
            let Some(f) = FEATURES.iter().find(|f| f.0 == name) else {
                return Err(format!(
                    "unknown CPU feature '{name}' (known: {})",
                    feature_names().collect::<Vec<_>>().join(" ")
                ));
            };
            Ok((f.0, on))
        }
    }

    /// The leaves [`CpuModel::apply`] fills that KVM_GET_SUPPORTED_CPUID may
    /// not list (the caller adds them, zeroed, before applying).
    pub fn leaves_to_add(&self) -> &'static [u32] {
        match self.base {
            CpuBase::Qemu64 => &BRAND_LEAVES,
            CpuBase::Host | CpuBase::Max => &[],
        }
    }

    /// Applies the model to KVM's supported CPUID (before per-vCPU patches).
    /// A `+flag` sets the bit even where the host lacks it: KVM then refuses
    /// or ignores it, as it would for QEMU's `enforce`-less models.
    pub fn apply(&self, entries: &mut [kvm_cpuid_entry2]) {
        qemu_default_kvm_features(entries);
        for e in entries.iter_mut().filter(|e| e.function == INVTSC.0) {
            e.edx &= !INVTSC.1;
        }
        if self.base == CpuBase::Qemu64 {
            for e in entries.iter_mut() {
                match e.function {
                    1 => {
                        e.eax = QEMU64_1_EAX;
                        e.edx &= QEMU64_1_EDX;
                        e.ecx &= QEMU64_1_ECX;
                    }
                    f if BRAND_LEAVES.contains(&f) => {
                        let i = (f - BRAND_LEAVES[0]) as usize;
                        [e.eax, e.ebx, e.ecx, e.edx] = brand_words(QEMU64_MODEL_ID)[i];
                    }
                    7 if e.index == 0 => {
                        e.ebx = 0;
                        e.ecx = 0;
                        e.edx = 0;
                    }
                    0x8000_0001 => {
                        e.edx &= QEMU64_EXT_EDX;
                        e.ecx &= QEMU64_EXT_ECX;
                    }
                    _ => {}
                }
            }
        }
        for (name, on) in &self.edits {
            let Some(&(_, leaf, reg, bit)) = FEATURES.iter().find(|f| f.0 == *name) else {
                continue;
            };
            for e in entries
                .iter_mut()
                .filter(|e| e.function == leaf && e.index == 0)
            {
                let r = match reg {
                    Reg::Ebx => &mut e.ebx,
                    Reg::Ecx => &mut e.ecx,
                    Reg::Edx => &mut e.edx,
                };
                if *on {
                    *r |= 1 << bit;
                } else {
                    *r &= !(1 << bit);
                }
            }
        }
    }
}

impl std::fmt::Display for CpuModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.base {
            CpuBase::Host => "host",
            CpuBase::Max => "max",
            CpuBase::Qemu64 => "qemu64",
        })?;
        for (name, on) in &self.edits {
            write!(f, ",{}{name}", if *on { '+' } else { '-' })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(function: u32, index: u32) -> kvm_cpuid_entry2 {
        kvm_cpuid_entry2 {
            function,
            index,
            ebx: 0x07_08_09_0a,
            edx: 0x55,
            ..Default::default()
        }
    }

    #[test]
    fn apic_ids_are_patched_into_leaf_1_and_topology_leaves() {
        let mut e = vec![
            entry(0, 0),
            entry(1, 0),
            entry(0xb, 0),
            entry(0xb, 1),
            entry(0x1f, 0),
            entry(7, 0),
        ];
        patch_for_vcpu(&mut e, 3);
        assert_eq!(e[1].ebx, 0x03_08_09_0a);
        assert_eq!(e[2].edx, 3);
        assert_eq!(e[3].edx, 3);
        assert_eq!(e[4].edx, 3);
        assert_eq!(e[5].edx, 0x55);
        assert_eq!(e[0].edx, 0x55);
    }

    #[test]
    fn vendor_is_read_from_leaf_0() {
        let e = kvm_cpuid_entry2 {
            ebx: u32::from_le_bytes(*b"Genu"),
            edx: u32::from_le_bytes(*b"ineI"),
            ecx: u32::from_le_bytes(*b"ntel"),
            ..Default::default()
        };
        assert_eq!(vendor(&[e]).as_deref(), Some("GenuineIntel"));
        assert_eq!(vendor(&[]), None);
    }

    fn feature(e: &[kvm_cpuid_entry2], leaf: u32, reg: char, bit: u32) -> bool {
        let x = e
            .iter()
            .find(|x| x.function == leaf && x.index == 0)
            .unwrap();
        let r = match reg {
            'b' => x.ebx,
            'c' => x.ecx,
            _ => x.edx,
        };
        r & (1 << bit) != 0
    }

    fn all_ones() -> Vec<kvm_cpuid_entry2> {
        [1u32, 7, 0x8000_0001, 0x4000_0001, 0x8000_0007]
            .iter()
            .map(|&function| kvm_cpuid_entry2 {
                function,
                eax: !0,
                ebx: !0,
                ecx: !0,
                edx: !0,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn qemu64_masks_to_the_model_and_flags_edit_it() {
        let mut e = all_ones();
        let m = CpuModel::parse("qemu64,-cx16,+popcnt").unwrap();
        m.apply(&mut e);
        assert!(feature(&e, 1, 'c', 0), "sse3 kept");
        assert!(!feature(&e, 1, 'c', 13), "cx16 removed");
        assert!(feature(&e, 1, 'c', 23), "popcnt added");
        assert!(!feature(&e, 1, 'c', 26), "no xsave in qemu64");
        assert!(feature(&e, 1, 'c', 31), "hypervisor kept");
        assert!(feature(&e, 1, 'd', 26), "sse2");
        assert!(!feature(&e, 7, 'b', 20), "no smap");
        assert!(feature(&e, 0x8000_0001, 'd', 29), "lm");
        assert!(!feature(&e, 1, 'c', 24), "no TSC deadline in qemu64");
        assert_eq!(e[0].eax, 0x0006_0fb1, "family 15, model 107, stepping 1");
        assert_eq!(e[3].eax, QEMU_DEFAULT_KVM_FEATURES, "QEMU's PV set");
        assert_eq!(m.to_string(), "qemu64,-cx16,+popcnt");
    }

    #[test]
    fn qemu64_reports_qemus_brand_string_and_plus_tsc_deadline_restores_it() {
        let m = CpuModel::parse("qemu64,+tsc-deadline").unwrap();
        assert_eq!(m.leaves_to_add(), &BRAND_LEAVES);
        assert!(CpuModel::parse("host").unwrap().leaves_to_add().is_empty());
        let mut e = all_ones();
        e.extend(BRAND_LEAVES.iter().map(|&function| kvm_cpuid_entry2 {
            function,
            ..Default::default()
        }));
        m.apply(&mut e);
        assert!(feature(&e, 1, 'c', 24), "+tsc-deadline");
        let mut brand = Vec::new();
        for x in e.iter().filter(|x| BRAND_LEAVES.contains(&x.function)) {
            for r in [x.eax, x.ebx, x.ecx, x.edx] {
                brand.extend_from_slice(&r.to_le_bytes());
            }
        }
        assert_eq!(brand.len(), 48);
        assert_eq!(&brand[..QEMU64_MODEL_ID.len()], QEMU64_MODEL_ID.as_bytes());
        assert!(brand[QEMU64_MODEL_ID.len()..].iter().all(|&b| b == 0));
    }

    #[test]
    fn host_and_max_keep_everything_and_bad_specs_are_refused() {
        for spec in ["host", "max"] {
            let mut e = all_ones();
            CpuModel::parse(spec).unwrap().apply(&mut e);
            let mut want = all_ones();
            want[3].eax = QEMU_DEFAULT_KVM_FEATURES;
            want[4].edx &= !(1 << 8);
            assert_eq!(e, want);
            let mut e = all_ones();
            CpuModel::parse(&format!("{spec},+invtsc"))
                .unwrap()
                .apply(&mut e);
            assert!(feature(&e, 0x8000_0007, 'd', 8), "+invtsc shows it");
        }
        let mut e = all_ones();
        CpuModel::parse("host,smap=off,sse4_2=off")
            .unwrap()
            .apply(&mut e);
        assert!(!feature(&e, 7, 'b', 20));
        assert!(!feature(&e, 1, 'c', 20));
        for bad in [
            "pentium",
            "host,+nosuchflag",
            "host,cx16",
            "host,cx16=maybe",
            "",
        ] {
            assert!(CpuModel::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(CpuModel::default().base, CpuBase::Host);
    }
}
