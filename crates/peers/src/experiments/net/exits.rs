//! The data path's exits in a `--stat` JSON report: the exits that reached
//! trapline at the card's data-path registers (QueueNotify, InterruptStatus,
//! InterruptACK), picked by their keys.
//!
//! Why by key: at the amounts a test uses, most of a `builtin:vnet` run's
//! exits are its own console (COM1's byte writes and status reads on x86,
//! the PL011's on arm64: 912 of 1,017 in a 10-pair x86 run), plus its
//! ucalls, the card's set-up and the exit at the end. Each of those has
//! its own key; the card's per-frame registers are the only ones a round
//! trip touches, so their count over the round trips is the data path's
//! cost whatever the amounts. KVM's own counters have no keys: they stay
//! whole-run figures (labelled so where they are shown).

use serde_json::Value;
use trapline_abi::{
    VIRTIO_MMIO_BASE, VIRTIO_MMIO_WINDOW, VIRT_VIRTIO_MMIO_BASE, VIRT_VIRTIO_MMIO_LEN,
    VIRT_VIRTIO_MMIO_STRIDE,
};
use trapline_devices::virtio::{DATA_PATH_OFFSETS, MMIO_LEN};

/// The name the bus gives every virtio-mmio transport (the `device` of a key).
const TRANSPORT_DEVICE: &str = "virtio-mmio";

/// The virtio-mmio windows of both machines: (first transport, window
/// length, one transport's stride). Both are listed, not one per arch: the
/// windows do not overlap, and a report read on another host still parses.
const WINDOWS: [(u64, u64, u64); 2] = [
    (VIRTIO_MMIO_BASE, VIRTIO_MMIO_WINDOW, MMIO_LEN),
    (
        VIRT_VIRTIO_MMIO_BASE,
        VIRT_VIRTIO_MMIO_LEN,
        VIRT_VIRTIO_MMIO_STRIDE,
    ),
];

/// A guest-physical address's register offset within its virtio-mmio
/// transport, on either machine (`None`: not in a transport window).
pub fn transport_offset(addr: u64) -> Option<u64> {
    WINDOWS.iter().find_map(|&(base, len, stride)| {
        let at = addr.checked_sub(base).filter(|&at| at < len)?;
        Some(at % stride)
    })
}

/// Whether one key of the report is an exit of the data path: a virtio-mmio
/// transport's QueueNotify, InterruptStatus or InterruptACK. net-paths'
/// child has one virtio device, the card, so its transport's keys are the
/// card's (the other, empty transports arm64's machine adds are only read
/// at set-up, at other registers).
pub fn is_data_path_key(key: &Value) -> bool {
    key["device"] == TRANSPORT_DEVICE
        && key["addr"]
            .as_u64()
            .and_then(transport_offset)
            .is_some_and(|off| DATA_PATH_OFFSETS.contains(&off))
}

/// Exits at the card's data-path registers, all vCPUs (`None`: not a
/// trapline-stat report with keys).
#[allow(clippy::cast_precision_loss)]
pub fn card_exits(v: &Value) -> Option<f64> {
    let mut n = 0u64;
    for cpu in v.get("vcpus")?.as_array()? {
        n += cpu
            .get("keys")?
            .as_array()?
            .iter()
            .filter(|k| is_data_path_key(k))
            .filter_map(|k| k["count"].as_u64())
            .sum::<u64>();
    }
    Some(n as f64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn key(device: &str, addr: Option<u64>, count: u64) -> Value {
        json!({ "device": device, "addr": addr, "count": count })
    }

    #[test]
    fn offsets_within_either_machines_transports() {
        // pc: 4 KiB transports from 0xd8000000; virt: 512-byte ones from 0x0a000000.
        assert_eq!(transport_offset(0xd800_0050), Some(0x50));
        assert_eq!(transport_offset(0xd800_1064), Some(0x64));
        assert_eq!(transport_offset(0x0a00_0060), Some(0x60));
        assert_eq!(transport_offset(0x0a00_3e50), Some(0x50));
        assert_eq!(transport_offset(0x3f8), None);
        assert_eq!(transport_offset(0x0900_0000), None, "the PL011");
        assert_eq!(
            transport_offset(VIRTIO_MMIO_BASE + VIRTIO_MMIO_WINDOW),
            None
        );
    }

    #[test]
    fn keeps_the_cards_per_frame_registers_and_leaves_the_console_out() {
        let cpu = json!({ "keys": [
            key("com1", Some(0x3fd), 457),          // x86 console: status reads
            key("com1", Some(0x3f8), 457),          // and byte writes
            key("pl011", Some(0x0900_0000), 300),   // arm64's console
            key("ucall", Some(0x700), 5),
            key("isa-debug-exit", Some(0xf4), 1),
            key("virtio-mmio", Some(0xd800_0050), 30), // QueueNotify
            key("virtio-mmio", Some(0xd800_0060), 27), // InterruptStatus
            key("virtio-mmio", Some(0xd800_0064), 27), // InterruptACK
            key("virtio-mmio", Some(0xd800_0070), 5),  // Status: set-up
            key("virtio-mmio", Some(0xd800_0100), 1),  // config: set-up
            key("virtio-mmio", None, 9),              // an overflow key: no address
            key("virtio-mmio", Some(0x0a00_3e60), 4),  // arm64's InterruptStatus
        ]});
        let report = json!({ "vcpus": [cpu.clone(), cpu] });
        assert_eq!(card_exits(&report), Some(2.0 * (30 + 27 + 27 + 4) as f64));
    }

    #[test]
    fn a_report_without_keys_has_no_count() {
        assert_eq!(card_exits(&json!({})), None);
        assert_eq!(card_exits(&json!({"vcpus": [{"exits": 3}]})), None);
        assert_eq!(card_exits(&json!("not a report")), None);
    }
}
