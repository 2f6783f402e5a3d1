//! `--cpu` on arm64: the vCPU is whatever KVM_ARM_PREFERRED_TARGET says
//! the host CPU is (`host`); x86's CPU models have no meaning here.

/// The vCPU model: only the host's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuModel;

impl CpuModel {
    /// Parse `--cpu`: `host` only.
    pub fn parse(spec: &str) -> Result<CpuModel, String> {
        match spec {
            "host" => Ok(CpuModel),
            other => Err(format!(
                "--cpu {other}: CPU models are x86-only; on arm64 the vCPU is the host's (--cpu host)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_host_is_a_cpu_model_on_arm64() {
        assert_eq!(CpuModel::parse("host"), Ok(CpuModel));
        let e = CpuModel::parse("qemu64").unwrap_err();
        assert!(e.contains("x86-only"), "{e}");
    }
}
