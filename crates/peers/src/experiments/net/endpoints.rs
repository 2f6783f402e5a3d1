//! The two ends of the data path, written once: the guest's (`builtin:vnet`
//! is given them on its command line) and the host's (the TAP's address and
//! the UDP echo's port). Private addresses in 10.0.1.0/24 and locally
//! administered MACs: nothing here is routed beyond the namespace.

/// One end: MAC, IPv4 address (host order) and UDP port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Ethernet address.
    pub mac: [u8; 6],
    /// IPv4 address, host byte order.
    pub ip: u32,
    /// UDP port.
    pub port: u16,
}

/// The guest's end.
pub const GUEST: Endpoint = Endpoint {
    mac: [0x02, 0x74, 0x6c, 0x00, 0x00, 0x01],
    ip: 0x0a00_0102,
    port: 40000,
};

/// The host's end: the TAP inside the namespace and the UDP echo on it.
pub const HOST: Endpoint = Endpoint {
    mac: [0x02, 0x74, 0x6c, 0x00, 0x00, 0x02],
    ip: 0x0a00_0101,
    port: 7777,
};

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac_text(m: [u8; 6]) -> String {
    m.map(|b| format!("{b:02x}")).join(":")
}

/// `a.b.c.d`.
pub fn ip_text(ip: u32) -> String {
    std::net::Ipv4Addr::from(ip).to_string()
}

/// The guest's command-line words naming both ends (`mode=udp` or `echo`).
pub fn guest_words(udp: bool) -> String {
    format!(
        "mode={} mac={} ip={} sport={} peer_mac={} peer_ip={} port={}",
        if udp { "udp" } else { "echo" },
        mac_text(GUEST.mac),
        ip_text(GUEST.ip),
        GUEST.port,
        mac_text(HOST.mac),
        ip_text(HOST.ip),
        HOST.port
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_name_both_ends() {
        assert_eq!(
            guest_words(true),
            "mode=udp mac=02:74:6c:00:00:01 ip=10.0.1.2 sport=40000 peer_mac=02:74:6c:00:00:02 peer_ip=10.0.1.1 port=7777"
        );
        assert!(guest_words(false).starts_with("mode=echo "));
    }
}
