//! How a run ended, and the process exit status for it.

use trapline_bus::{AbsentDevice, StopReason};
use trapline_kvm::VcpuEnd;

/// Process exit statuses `trapline run` uses. Debug-exit statuses are
/// always odd (`(V << 1) | 1`), so every other outcome gets an even code.
pub mod status {
    /// The guest powered off (Bochs shutdown port, ACPI S5).
    pub const POWER_OFF: i32 = 0;
    /// Bad command line.
    pub const USAGE: i32 = 2;
    /// The guest image is missing, unreadable or invalid.
    pub const BAD_IMAGE: i32 = 4;
    /// /dev/kvm is missing or not accessible.
    pub const NO_KVM: i32 = 6;
    /// Any other host-side failure (a KVM ioctl, a file, a thread).
    pub const VMM_ERROR: i32 = 8;
    /// The guest triple-faulted (KVM_EXIT_SHUTDOWN).
    pub const TRIPLE_FAULT: i32 = 10;
    /// KVM could not run the guest (internal error, failed entry, an exit
    /// trapline does not handle).
    pub const KVM_FAILURE: i32 = 12;
    /// The guest touched an interrupt controller or timer the VM was built
    /// without (`--irqchip split|none`, `--no-pit`).
    pub const ABSENT_DEVICE: i32 = 14;
    /// `--timeout` expired.
    pub const TIMEOUT: i32 = 124;
    /// Standard output was a pipe its reader closed (`trapline … | head`):
    /// 128 + SIGPIPE, the status the shell shows for a C tool (cat, grep,
    /// QEMU) cut off the same way, so a `set -o pipefail` script sees
    /// trapline as it sees those, and a caller can tell that not all the
    /// output was delivered. Every subcommand ends with it, quietly, except
    /// `trapline run`, whose guest output was cut: it says so once.
    pub const CLOSED_PIPE: i32 = 141;
}

/// How a machine's run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// isa-debug-exit with this value.
    DebugExit(u32),
    /// The guest powered off.
    PowerOff,
    /// The guest asked for a reset (trapline has no firmware to reset into).
    Reset,
    /// The guest triple-faulted.
    TripleFault {
        /// Which vCPU.
        vcpu: usize,
        /// Its RIP, if it could be read.
        rip: Option<u64>,
    },
    /// The timeout expired first.
    Timeout,
    /// SIGINT, SIGTERM or SIGHUP (this number) asked the process to stop
    /// (see [`crate::signals`]).
    Signal(i32),
    /// The guest touched a device the VM was built without.
    AbsentDevice {
        /// Which vCPU.
        vcpu: usize,
        /// The device.
        device: AbsentDevice,
    },
    /// The timeout expired while the guest slept in ACPI S3 and no wake
    /// event it had enabled came.
    TimeoutAsleep,
    /// KVM could not run the guest.
    KvmFailure {
        /// Which vCPU.
        vcpu: usize,
        /// What happened: one line, then (for an internal error or a
        /// failed entry) the vCPU's registers and the code at RIP.
        detail: String,
    },
    /// The guest's console output could not be written (a closed pipe, a
    /// full disk), so the run was stopped.
    OutputFailed {
        /// The OS error number of the failed write.
        errno: i32,
    },
}

impl Outcome {
    /// From the first vCPU that ended for a reason other than being stopped.
    pub(crate) fn from_end(vcpu: usize, end: VcpuEnd) -> Option<Outcome> {
        Some(match end {
            // Handled by the run loop (the vCPU parks); never an end.
            VcpuEnd::Stopped | VcpuEnd::Device(StopReason::Suspend) => return None,
            VcpuEnd::Device(StopReason::DebugExit(v)) => Outcome::DebugExit(v),
            VcpuEnd::Device(StopReason::PowerOff) => Outcome::PowerOff,
            VcpuEnd::Device(StopReason::Reset) => Outcome::Reset,
            VcpuEnd::Device(StopReason::AbsentDevice(device)) => {
                Outcome::AbsentDevice { vcpu, device }
            }
            VcpuEnd::Device(StopReason::OutputFailed { errno }) => Outcome::OutputFailed { errno },
            VcpuEnd::TripleFault { rip } => Outcome::TripleFault { vcpu, rip },
            VcpuEnd::InternalError {
                suberror,
                data,
                dump,
            } => Outcome::KvmFailure {
                vcpu,
                detail: format!(
                    "KVM internal error: {} (suberror {suberror}){}\n{dump}",
                    trapline_kvm::crash::suberror_name(suberror),
                    if data.is_empty() {
                        String::new()
                    } else {
                        let words: Vec<String> = data.iter().map(|d| format!("{d:#x}")).collect();
                        format!(", KVM's data: {}", words.join(" "))
                    }
                ),
            },
            VcpuEnd::FailEntry { reason, dump } => Outcome::KvmFailure {
                vcpu,
                detail: format!("VM entry failed (hardware reason {reason:#x})\n{dump}"),
            },
            VcpuEnd::SystemEvent { kind } => match kind {
                kvm_bindings::KVM_SYSTEM_EVENT_SHUTDOWN => Outcome::PowerOff,
                kvm_bindings::KVM_SYSTEM_EVENT_RESET => Outcome::Reset,
                k => Outcome::KvmFailure {
                    vcpu,
                    detail: format!("KVM system event {k}"),
                },
            },
            VcpuEnd::Undecodable { what } => Outcome::KvmFailure { vcpu, detail: what },
            VcpuEnd::Unhandled { what } => Outcome::KvmFailure {
                vcpu,
                detail: format!("unhandled exit: {what}"),
            },
            VcpuEnd::RunError { errno } => Outcome::KvmFailure {
                vcpu,
                detail: format!(
                    "KVM_RUN failed: {}",
                    crate::words::io(&std::io::Error::from_raw_os_error(errno))
                ),
            },
        })
    }

    /// The process exit status for this outcome.
    pub fn exit_status(&self) -> i32 {
        match self {
            Outcome::DebugExit(v) => trapline_devices::debug_exit::exit_status(*v),
            // A reboot the guest asked for ends the run as cleanly as a
            // power-off (QEMU's -no-reboot exits 0 too).
            Outcome::PowerOff | Outcome::Reset => status::POWER_OFF,
            Outcome::TripleFault { .. } => status::TRIPLE_FAULT,
            Outcome::Timeout | Outcome::TimeoutAsleep => status::TIMEOUT,
            Outcome::Signal(sig) => crate::signals::exit_status(*sig),
            Outcome::KvmFailure { .. } => status::KVM_FAILURE,
            Outcome::AbsentDevice { .. } => status::ABSENT_DEVICE,
            Outcome::OutputFailed { errno } if *errno == libc::EPIPE => status::CLOSED_PIPE,
            Outcome::OutputFailed { .. } => status::VMM_ERROR,
        }
    }

    /// A description for the user: one line, except for a KVM failure,
    /// which adds the vCPU's state on the lines after it.
    pub fn describe(&self) -> String {
        match self {
            Outcome::DebugExit(v) => format!(
                "guest exited through isa-debug-exit with value {v} (status {})",
                self.exit_status()
            ),
            Outcome::PowerOff => "guest powered off".into(),
            Outcome::Reset => {
                "guest requested a reset; trapline has no firmware to reset into, so the run ends"
                    .into()
            }
            Outcome::TripleFault {
                vcpu,
                rip: Some(rip),
            } => format!("guest triple-faulted on vCPU {vcpu} at rip {rip:#x}"),
            Outcome::TripleFault { vcpu, rip: None } => {
                format!("guest triple-faulted on vCPU {vcpu}")
            }
            Outcome::Timeout => "timeout expired before the guest exited".into(),
            Outcome::Signal(sig) => format!(
                "stopped by {} (status {})",
                crate::signals::name(*sig),
                self.exit_status()
            ),
            Outcome::TimeoutAsleep => "timeout expired while the guest was suspended (ACPI S3) \
                waiting for a wake event: it enables the RTC alarm with RTC_EN in PM1_EN (and \
                AIE in the RTC), or the PM timer with TMR_EN"
                .into(),
            Outcome::KvmFailure { vcpu, detail } => format!("vCPU {vcpu}: {detail}"),
            Outcome::AbsentDevice { vcpu, device } => format!(
                "vCPU {vcpu} touched {}, which this VM was built without: run it with {}",
                device.what(),
                device.remedy()
            ),
            Outcome::OutputFailed { errno } => format!(
                "the guest's console output could not be written ({}): the run was stopped",
                crate::words::io(&std::io::Error::from_raw_os_error(*errno)).to_lowercase()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_distinct_and_debug_exit_is_odd() {
        let all = [
            status::POWER_OFF,
            status::USAGE,
            status::BAD_IMAGE,
            status::NO_KVM,
            status::VMM_ERROR,
            status::TRIPLE_FAULT,
            status::KVM_FAILURE,
            status::ABSENT_DEVICE,
            status::TIMEOUT,
        ];
        for (i, a) in all.iter().enumerate() {
            assert_eq!(a % 2, 0);
            assert!(!all[i + 1..].contains(a));
        }
        assert_eq!(Outcome::DebugExit(1).exit_status(), 3);
        assert_eq!(Outcome::Timeout.exit_status(), 124);
        assert_eq!(Outcome::TimeoutAsleep.exit_status(), 124);
    }

    #[test]
    fn stopped_vcpus_do_not_decide_the_outcome() {
        assert_eq!(Outcome::from_end(1, VcpuEnd::Stopped), None);
        assert_eq!(
            Outcome::from_end(0, VcpuEnd::TripleFault { rip: Some(5) }),
            Some(Outcome::TripleFault {
                vcpu: 0,
                rip: Some(5)
            })
        );
    }
}
