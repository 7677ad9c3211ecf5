//! Fuzz `Packet::parse` (RFC 791 / RFC 9293 / RFC 768 header parsing, RFC 9293 §3.2 option
//! parsing): it must never panic, and whatever it accepts must serialise back to bytes that
//! parse to the same packet whenever rantcp's option layout can hold it. Each input is tried
//! as is and with its IPv4 and TCP/UDP checksums recomputed (RFC 1071), so the fuzzer reaches
//! the length and option checks that sit behind checksum verification.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rantcp_wire::checksum::{internet_checksum, Checksum};
use rantcp_wire::{Packet, IPV4_MAX_LEN};

/// Recompute the IPv4 header checksum and, where the header says TCP/UDP and the bytes hold
/// the checksum field, the transport checksum.
fn fix_checksums(b: &mut [u8]) {
    if b.len() < 20 {
        return;
    }
    b[10..12].copy_from_slice(&[0, 0]);
    let c = internet_checksum(&b[..20]);
    b[10..12].copy_from_slice(&c.to_be_bytes());
    let total = (u16::from_be_bytes([b[2], b[3]]) as usize).min(b.len());
    let at = match b[9] {
        6 if total >= 40 => 36,
        17 if total >= 28 => 26,
        _ => return,
    };
    b[at..at + 2].copy_from_slice(&[0, 0]);
    let mut c = Checksum::new();
    c.add_bytes(&b[12..20]);
    c.add_u16(b[9] as u16);
    c.add_u16((total - 20) as u16);
    c.add_bytes(&b[20..total]);
    b[at..at + 2].copy_from_slice(&c.finish().to_be_bytes());
}

fn check(data: &[u8]) {
    if let Ok(p) = Packet::parse(data) {
        let o = p.as_tcp().map(|t| t.options).unwrap_or_default();
        if p.len() <= IPV4_MAX_LEN && o.sack_len as usize <= o.sack_capacity() {
            let bytes = p.to_bytes();
            assert_eq!(bytes.len(), p.len() as usize);
            assert_eq!(Packet::parse(&bytes), Ok(p));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut fixed = data.to_vec();
    fix_checksums(&mut fixed);
    check(&fixed);
});
