//! pcap files: exact header bytes, records read back, snaplen truncation, and (when tshark is
//! installed) Wireshark's dissectors reading our output without malformed or error items.

mod common;

use std::process::Command;

use common::*;
use rantcp_wire::pcap::{self, PcapWriter, LINKTYPE_IPV4, LINKTYPE_RAW};
use rantcp_wire::*;

fn write_flow(snaplen: u32) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), snaplen).unwrap();
    for (ts, p) in sample_flow() {
        w.write_packet(ts, &p).unwrap();
    }
    assert_eq!(w.packets_written(), sample_flow().len() as u64);
    w.finish().unwrap()
}

#[test]
fn test_file_header_exact() {
    let f = PcapWriter::new(Vec::new(), 0).unwrap().finish().unwrap();
    assert_eq!(
        f,
        [
            0x4d, 0x3c, 0xb2, 0xa1, // magic 0xa1b23c4d (nanoseconds), little-endian
            2, 0, 4, 0, // version 2.4
            0, 0, 0, 0, // thiszone
            0, 0, 0, 0, // sigfigs
            0xff, 0xff, 0, 0, // snaplen 65535 (0 asked for)
            101, 0, 0, 0, // LINKTYPE_RAW
        ]
    );
    let f = PcapWriter::with_linktype(Vec::new(), 96, LINKTYPE_IPV4)
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(&f[16..24], &[96, 0, 0, 0, 228, 0, 0, 0]);
}

#[test]
fn test_record_bytes_exact() {
    let (_, p) = sample_flow()[0];
    let mut w = PcapWriter::new(Vec::new(), 65535).unwrap();
    w.write_packet(3_000_000_123, &p).unwrap();
    let f = w.finish().unwrap();
    let r = &f[pcap::FILE_HEADER_LEN..];
    assert_eq!(
        &r[..16],
        &[3, 0, 0, 0, 123, 0, 0, 0, 60, 0, 0, 0, 60, 0, 0, 0]
    );
    assert_eq!(&r[16..], &p.to_bytes()[..]);
}

#[test]
fn test_read_back() {
    let f = write_flow(65535);
    let rd = pcap::read(&f).unwrap();
    assert_eq!(
        (rd.snaplen, rd.linktype, rd.nanos),
        (65535, LINKTYPE_RAW, true)
    );
    let recs: Vec<_> = rd.map(|r| r.unwrap()).collect();
    let flow = sample_flow();
    assert_eq!(recs.len(), flow.len());
    for (r, (ts, p)) in recs.iter().zip(&flow) {
        assert_eq!(r.ts_ns, *ts);
        assert_eq!(r.orig_len, p.len());
        assert_eq!(r.data, &p.to_bytes()[..]);
        assert_eq!(Packet::parse(r.data), Ok(*p));
    }
}

#[test]
fn test_snaplen_truncates() {
    for snaplen in [1, 20, 30, 52, 64, 100, 1000] {
        let f = write_flow(snaplen);
        let flow = sample_flow();
        for (r, (_, p)) in pcap::read(&f).unwrap().zip(&flow) {
            let r = r.unwrap();
            let full = p.to_bytes();
            let n = full.len().min(snaplen as usize);
            assert_eq!(r.orig_len as usize, full.len());
            assert_eq!(r.data, &full[..n], "snaplen {snaplen}");
        }
    }
}

#[test]
fn test_read_errors_and_micros() {
    assert!(pcap::read(&[0; 10]).is_err());
    assert!(pcap::read(&[0; 24]).is_err());
    // A big-endian microsecond file with one record, cut short.
    let mut f = vec![
        0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 101,
    ];
    f.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 3, 7, 8, 9]);
    let rd = pcap::read(&f).unwrap();
    assert_eq!((rd.snaplen, rd.linktype, rd.nanos), (256, 101, false));
    let recs: Vec<_> = rd.collect();
    assert_eq!(recs.len(), 1);
    let r = recs[0].as_ref().unwrap();
    assert_eq!(
        (r.ts_ns, r.orig_len, r.data),
        (2_000_005_000, 3, &[7u8, 8, 9][..])
    );
    f.pop();
    let recs: Vec<_> = pcap::read(&f).unwrap().collect();
    assert_eq!(recs.len(), 1);
    assert!(recs[0].is_err());
}

#[test]
fn test_oversized_packet_rejected() {
    let p = Packet::udp(
        ip([1, 1, 1, 1], [2, 2, 2, 2]),
        UdpHeader {
            src_port: 1,
            dst_port: 2,
        },
        70_000,
    );
    let mut w = PcapWriter::new(Vec::new(), 100).unwrap();
    let e = w.write_packet(0, &p).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(w.packets_written(), 0);
    assert_eq!(w.finish().unwrap().len(), pcap::FILE_HEADER_LEN);
}

/// Wireshark reads our file: every frame dissects as IPv4 + TCP/UDP with good checksums and
/// no malformed or error-level expert items; SACK edges and the AS-TCP option show up.
#[test]
fn test_tshark_reads_output() {
    if Command::new("tshark").arg("--version").output().is_err() {
        println!("note: tshark not installed; skipping the Wireshark check");
        return;
    }
    let path = std::env::temp_dir().join(format!("rantcp-wire-test-{}.pcap", std::process::id()));
    std::fs::write(&path, write_flow(65535)).unwrap();
    // RANTCP_WIRE_PCAP=<file> keeps a copy for inspection (`tshark -V -r <file>`).
    if let Some(keep) = std::env::var_os("RANTCP_WIRE_PCAP") {
        std::fs::copy(&path, keep).unwrap();
    }
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&path)
        .args([
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
        ])
        .args([
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=,",
        ])
        .args([
            "-e",
            "frame.number",
            "-e",
            "frame.protocols",
            "-e",
            "_ws.malformed",
        ])
        .args(["-e", "_ws.expert.severity", "-e", "_ws.expert.message"])
        .args([
            "-e",
            "tcp.options.sack_le",
            "-e",
            "tcp.options.timestamp.tsval",
            "-e",
            "tcp.option_kind",
        ])
        .args([
            "-e",
            "tcp.checksum.status",
            "-e",
            "udp.checksum.status",
            "-e",
            "ip.checksum.status",
            "-e",
            "tcp.options.experimental.exid",
            "-e",
            "tcp.options.experimental.data",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}{stderr}");
    assert!(out.status.success(), "tshark failed: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), sample_flow().len());
    // Expert severities (epan/proto.h): 0x00200000 chat, 0x00400000 note, 0x00600000 warn,
    // 0x00800000 error. tshark prints them in decimal.
    const PI_ERROR: u32 = 0x0080_0000;
    let mut saw_sack = false;
    let mut saw_as_tcp = false;
    let mut saw_udp = false;
    for line in &lines {
        let f: Vec<&str> = line.split('|').collect();
        assert_eq!(f.len(), 13, "{line}");
        let (protocols, malformed, severities, messages) = (f[1], f[2], f[3], f[4]);
        assert!(
            !protocols.contains("malformed") && malformed.is_empty(),
            "malformed: {line}"
        );
        for s in severities.split(',').filter(|s| !s.is_empty()) {
            let v = match s.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16),
                None => s.parse(),
            }
            .unwrap_or(u32::MAX);
            assert!(v < PI_ERROR, "error-level expert item {messages}: {line}");
        }
        assert!(
            protocols.starts_with("raw:ip:") || protocols.starts_with("ip:"),
            "{line}"
        );
        // Checksum status (epan/proto.h): 0 bad, 1 good, 2 unverified, 3 not present.
        assert_eq!(f[10], "1", "IPv4 checksum: {line}");
        assert_eq!(
            if protocols.contains("udp") {
                f[9]
            } else {
                f[8]
            },
            "1",
            "checksum: {line}"
        );
        saw_sack |= f[5].split(',').count() == 3;
        if f[7].split(',').any(|k| k == "253") {
            // RFC 6994: Wireshark shows AS-TCP's ExID 0x4153 and the 4-byte MH ack as data.
            assert_eq!(f[11], "0x4153", "AS-TCP ExID: {line}");
            assert_eq!(f[12].len(), 8, "AS-TCP MH ack, 4 bytes: {line}");
            saw_as_tcp = true;
        }
        saw_udp |= protocols.contains("udp");
    }
    assert!(
        saw_sack && saw_as_tcp && saw_udp,
        "expected SACK, AS-TCP and UDP frames"
    );
}
