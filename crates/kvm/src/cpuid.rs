//! Per-vCPU CPUID.

use kvm_bindings::kvm_cpuid_entry2;

/// Patch the host's supported CPUID for one vCPU: its APIC ID goes into
/// leaf 1 EBX[31:24] and into EDX of every subleaf of leaves 0xB and 0x1F
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
}
