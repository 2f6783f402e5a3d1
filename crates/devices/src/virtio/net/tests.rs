//! virtio-net driven the way a driver would, on plain guest memory (no
//! KVM): exact bytes through the echo back end, hostile rings.

use super::*;

#[test]
fn config_space_holds_the_mac_and_link_up() {
    let net = Net::new(Box::new(Echo::new()), DEFAULT_MAC);
    let mut cfg = [0xffu8; 12];
    net.read_config(0, &mut cfg);
    assert_eq!(cfg, [0x52, 0x54, 0, 0x12, 0x34, 0x56, 1, 0, 0, 0, 0, 0]);
    let mut b = [0u8; 2];
    net.read_config(6, &mut b);
    assert_eq!(b, [1, 0]);
    net.read_config(u64::MAX, &mut b);
    assert_eq!(b, [0, 0]);
    assert_eq!(net.device_type(), 1);
    assert_eq!(net.features(), 1 << 5 | 1 << 16);
    assert_eq!(net.queue_max_sizes(), &[256, 256]);
}
