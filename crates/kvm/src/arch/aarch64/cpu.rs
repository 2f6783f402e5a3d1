//! `--cpu` on arm64: the vCPU is whatever KVM_ARM_PREFERRED_TARGET says
//! the host CPU is (`host`); x86's CPU models have no meaning here.

/// The vCPU model: only the host's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuModel(());

impl CpuModel {
    /// Parse `--cpu`: `host` only (QEMU's `max` is the same under KVM).
    pub fn parse(spec: &str) -> Result<CpuModel, String> {
        let (model, ignored) = Self::parse_lenient(spec);
        match ignored.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(model),
        }
    }

    /// Like [`CpuModel::parse`], but anything else is described in the
    /// returned list and the host's model used (for QEMU spellings).
    pub fn parse_lenient(spec: &str) -> (CpuModel, Vec<String>) {
        match spec.trim() {
            "host" | "max" => (CpuModel(()), Vec::new()),
            other => (
                CpuModel(()),
                vec![format!(
                    "--cpu {other}: CPU models are x86-only; on arm64 the vCPU is the host's (--cpu host)"
                )],
            ),
        }
    }
}

impl std::fmt::Display for CpuModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("host")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_host_is_a_cpu_model_on_arm64() {
        assert_eq!(CpuModel::parse("host"), Ok(CpuModel::default()));
        let e = CpuModel::parse("qemu64").unwrap_err();
        assert!(e.contains("x86-only"), "{e}");
    }
}
