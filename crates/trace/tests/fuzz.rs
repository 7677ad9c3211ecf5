//! Seeded mutation fuzzing of the capture reader and the analysis: every input must either be
//! refused with a one-line [`ReadError`] or analysed (possibly with a stop reason) — never a
//! panic (overflow checks are on in test builds) or a hang. The seed corpus covers pcap (both
//! byte orders, micro/nano magic, every decoded link type, IPv6, VLAN, TCP options) and pcapng
//! (two interfaces, `if_tsresol`); mutations are truncation at every byte, byte flips, and
//! 32-bit fields overwritten with 0, 1, 11, 12, 0xFFFFFFFF and random values.
//!
//! `RANTCP_FUZZ_ITERS` raises the number of random mutations per seed (default 300).

use std::sync::mpsc;
use std::time::Duration;

use rantcp_trace::decode::tcp_flags::*;
use rantcp_trace::reader::linktype;
use rantcp_trace::testing::{
    ethernet, pcapng_block as block, pcapng_interface, pcapng_packet as epb, pcapng_section_header,
    sll, sll2, Pcap, Seg,
};
use rantcp_trace::{analyze, Options};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn conversation() -> Vec<Seg> {
    let mut syn = Seg::c2s(100, 0, SYN, 0);
    syn.wscale = Some(7);
    syn.ts = Some((1, 0));
    let mut synack = Seg::s2c(5000, 101, SYN | ACK, 0);
    synack.wscale = Some(7);
    synack.ts = Some((9, 1));
    vec![
        syn,
        synack,
        Seg::c2s(101, 5001, ACK, 0),
        Seg::s2c(5001, 101, ACK | PSH, 1000),
        Seg::s2c(6001, 101, ACK, 1000),
        Seg::c2s(101, 6001, ACK, 0),
        Seg::s2c(5001, 101, ACK, 1000),
        Seg::c2s(101, 7001, ACK | FIN, 0),
        Seg::s2c(7001, 102, ACK | FIN, 0),
    ]
}

/// Seed captures: (name, bytes).
fn corpus() -> Vec<(&'static str, Vec<u8>)> {
    let segs = conversation();
    let mut out = Vec::new();
    let mut pcap = |name, lt, snap, wrap: &dyn Fn(&Seg) -> Vec<u8>| {
        let mut p = Pcap::new(lt, snap);
        for (i, s) in segs.iter().enumerate() {
            p.record(1_000_000 * i as i64, &wrap(s), None);
        }
        out.push((name, p.bytes));
    };
    pcap("raw", linktype::RAW, 65535, &|s| s.ipv4());
    pcap("eth-vlan-snap64", linktype::ETHERNET, 64, &|s| {
        ethernet(&s.ipv4(), Some(7))
    });
    pcap("sll", linktype::LINUX_SLL, 96, &|s| sll(&s.ipv4()));
    pcap("sll2-ipv6", linktype::LINUX_SLL2, 65535, &|s| {
        sll2(&s.ipv6())
    });
    pcap("null-ipv6", linktype::NULL, 65535, &|s| {
        let mut f = vec![30, 0, 0, 0];
        f.extend(s.ipv6());
        f
    });
    // Big-endian, microsecond magic (what tcpdump writes on a big-endian host).
    let mut be = Vec::new();
    be.extend_from_slice(&0xa1b2_c3d4u32.to_be_bytes());
    be.extend_from_slice(&2u16.to_be_bytes());
    be.extend_from_slice(&4u16.to_be_bytes());
    be.extend_from_slice(&[0; 8]);
    be.extend_from_slice(&54u32.to_be_bytes());
    be.extend_from_slice(&1u32.to_be_bytes());
    for (i, s) in segs.iter().enumerate() {
        let f = ethernet(&s.ipv4(), None);
        let incl = f.len().min(54);
        for v in [
            1_700_000_000u32,
            i as u32 * 1000,
            incl as u32,
            f.len() as u32,
        ] {
            be.extend_from_slice(&v.to_be_bytes());
        }
        be.extend_from_slice(&f[..incl]);
    }
    out.push(("be-usec-snap54", be));
    // pcapng: two interfaces (Ethernet µs, raw IP ns), an unknown block type, a simple packet.
    let mut ng = Vec::new();
    ng.extend(pcapng_section_header());
    ng.extend(pcapng_interface(1, &[]));
    ng.extend(pcapng_interface(101, &[9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0]));
    for (i, s) in segs.iter().enumerate() {
        if i % 2 == 0 {
            ng.extend(epb(0, 1_000_000 + i as u64, &ethernet(&s.ipv4(), None)));
        } else {
            ng.extend(epb(1, 1_000_000_000 + i as u64, &s.ipv4()));
        }
        if i == 3 {
            ng.extend(block(0x0bad_cafe, &[1, 2, 3, 4, 5]));
            let mut spb = 60u32.to_le_bytes().to_vec();
            spb.extend(ethernet(&s.ipv4(), None));
            ng.extend(block(3, &spb));
        }
    }
    out.push(("pcapng", ng));
    out
}

/// Analyse on a worker thread; `Err` describes a panic or a hang.
fn check(bytes: Vec<u8>) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| {
            let mut rows = 0usize;
            match analyze(&bytes[..], Options::default(), 4, |c| rows += c.len()) {
                Ok(a) => {
                    // A stop reason is one line.
                    if let Some(s) = &a.read.stop_reason {
                        assert!(!s.contains('\n'), "two-line stop reason {s:?}");
                    }
                    assert_eq!(rows as u64, a.frames.tcp);
                }
                Err(e) => assert!(!e.to_string().contains('\n')),
            }
        });
        let _ = tx.send(r.map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        }));
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(p)) => Err(format!("panic: {p}")),
        Err(_) => Err("hang (> 10 s)".into()),
    }
}

#[test]
fn mutated_captures_never_panic_or_hang() {
    let iters: usize = std::env::var("RANTCP_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let mut rng = Rng(0x5eed_0001);
    let mut failures = Vec::new();
    let mut tried = 0usize;
    let mut report = |name: &str, what: String, bytes: &[u8], r: Result<(), String>| {
        if let Err(e) = r {
            let path =
                std::env::temp_dir().join(format!("rantcp-fuzz-{name}-{}.bin", failures.len()));
            let _ = std::fs::write(&path, bytes);
            failures.push(format!("{name} {what}: {e} (input: {})", path.display()));
        }
    };
    for (name, seed) in corpus() {
        // Truncation at every byte.
        for cut in 0..seed.len() {
            tried += 1;
            report(
                name,
                format!("cut at {cut}"),
                &seed[..cut],
                check(seed[..cut].to_vec()),
            );
        }
        for i in 0..iters {
            let mut m = seed.clone();
            let n = 1 + rng.below(4);
            for _ in 0..n {
                let at = rng.below(m.len());
                match rng.below(4) {
                    0 => m[at] ^= 1 << rng.below(8),
                    1 => m[at] = rng.next() as u8,
                    _ => {
                        let v: u32 = match rng.below(7) {
                            0 => 0,
                            1 => 1,
                            2 => 11,
                            3 => 12,
                            4 => 0xFFFF_FFFF,
                            5 => 0x8000_0000,
                            _ => rng.next() as u32,
                        };
                        let at = at.min(m.len().saturating_sub(4));
                        let be = rng.below(2) == 0;
                        let b = if be { v.to_be_bytes() } else { v.to_le_bytes() };
                        let end = (at + 4).min(m.len());
                        m[at..end].copy_from_slice(&b[..end - at]);
                    }
                }
            }
            if rng.below(4) == 0 {
                m.truncate(rng.below(m.len() + 1));
            }
            tried += 1;
            let r = check(m.clone());
            report(name, format!("mutation {i}"), &m, r);
        }
    }
    eprintln!("fuzz: {tried} inputs, {} failures", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ------------------------------------------------------------------ what the fuzzing found

fn stop_reason(bytes: &[u8]) -> (u64, Option<String>) {
    let a = analyze(bytes, Options::default(), 16, |_| {}).unwrap();
    (a.frames.frames, a.read.stop_reason)
}

#[test]
fn compressed_captures_are_named() {
    // Wireshark reads (and editcap writes) gzip captures; pcap-parser does not: say what the
    // file is and how to undo it, instead of "unknown magic number".
    for (head, what) in [
        (
            &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0][..],
            "gzip-compressed; decompress it first: gunzip -k FILE",
        ),
        (
            &[0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0][..],
            "zstd-compressed; decompress it first: zstd -d FILE",
        ),
        (
            &b"BZh91AY&SY"[..],
            "bzip2-compressed; decompress it first: bunzip2 -k FILE",
        ),
    ] {
        let mut f = head.to_vec();
        f.extend_from_slice(&[0x55; 40]);
        let e = analyze(&f[..], Options::default(), 16, |_| {})
            .err()
            .unwrap();
        assert_eq!(e.to_string(), format!("not a pcap or pcapng file ({what})"));
    }
}

#[test]
fn absurd_record_length_names_the_record() {
    // handshake_and_data: 24-byte header, then 56-byte records; record 2 starts at byte 80.
    let mut f = rantcp_trace::testing::handshake_and_data();
    f[80 + 8..80 + 12].copy_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
    assert_eq!(
        stop_reason(&f),
        (
            1,
            Some(
                "record 2 at byte 80: captured length 4294967295 is larger than the 1 MiB limit \
                 (damaged file)"
                    .into()
            )
        )
    );
    // A length within the limit but beyond the end of the file: the file ends inside it.
    f[80 + 8..80 + 12].copy_from_slice(&5000u32.to_le_bytes());
    assert_eq!(
        stop_reason(&f),
        (
            1,
            Some("file ends inside record 2 at byte 80 (1224 of its bytes present)".into())
        )
    );
}

fn ng_with(mutate: impl Fn(&mut Vec<u8>, usize)) -> Vec<u8> {
    let mut ng = Vec::new();
    ng.extend(pcapng_section_header());
    ng.extend(pcapng_interface(101, &[]));
    ng.extend(epb(0, 1, &Seg::c2s(100, 0, SYN, 0).ipv4()));
    let at = ng.len();
    ng.extend(epb(0, 2, &Seg::s2c(500, 101, SYN | ACK, 0).ipv4()));
    mutate(&mut ng, at);
    ng
}

#[test]
fn pcapng_bad_block_lengths_name_the_block() {
    // Block 4 (the second packet) starts at byte 120 (SHB 28, IDB 20, EPB 72).
    let set = |v: u32, off: usize| {
        move |b: &mut Vec<u8>, at: usize| {
            b[at + off..at + off + 4].copy_from_slice(&v.to_le_bytes())
        }
    };
    let cases = [
        (
            set(54, 4),
            "malformed block (length 54 is not a multiple of 4)",
        ),
        (
            set(0xFFFF_FFFC, 4),
            "malformed block (length 4294967292 is larger than the 1 MiB limit)",
        ),
        (
            set(76, 68),
            "malformed block (length 72 at its start, 76 at its end)",
        ),
    ];
    for (m, why) in cases {
        let f = ng_with(m);
        assert_eq!(
            stop_reason(&f),
            (
                1,
                Some(format!("the block at byte 120 (after record 1): {why}"))
            )
        );
    }
}

#[test]
fn extreme_pcapng_timestamps_stay_in_range() {
    // if_tsresol 10^0 with if_tsoffset -2^63 and a timestamp of 2^64-1: the nanosecond time
    // overflowed (a panic with overflow checks, i64::MAX otherwise, and the session code's time
    // differences overflowed in turn).
    let mut ng = Vec::new();
    ng.extend(pcapng_section_header());
    let mut opts = vec![9, 0, 1, 0, 0, 0, 0, 0]; // if_tsresol = 0 (seconds)
    opts.extend_from_slice(&[14, 0, 8, 0]); // if_tsoffset
    opts.extend_from_slice(&i64::MIN.to_le_bytes());
    opts.extend_from_slice(&[0, 0, 0, 0]);
    ng.extend(pcapng_interface(101, &opts));
    ng.extend(epb(0, u64::MAX, &Seg::c2s(100, 0, SYN, 0).ipv4()));
    ng.extend(epb(0, 0, &Seg::s2c(500, 101, SYN | ACK, 0).ipv4()));
    let mut ts = Vec::new();
    rantcp_trace::reader::read_frames(&ng[..], |f| ts.push(f.ts_ns)).unwrap();
    assert_eq!(ts.len(), 2);
    let max = rantcp_trace::reader::MAX_TS_NS;
    assert!(ts.iter().all(|t| (-max..=max).contains(t)), "{ts:?}");
    let a = analyze(&ng[..], Options::default(), 16, |_| {}).unwrap();
    assert_eq!(a.frames.tcp, 2);
}

#[test]
fn unsupported_link_types_are_counted_and_named() {
    let mut p = Pcap::new(127, 65535); // IEEE 802.11 radiotap
    p.record(0, &[0, 0, 8, 0, 0, 0, 0, 0], None);
    let a = analyze(&p.bytes[..], Options::default(), 16, |_| {}).unwrap();
    assert_eq!(
        (a.frames.frames, a.frames.unsupported, a.frames.not_tcp),
        (1, 1, 1)
    );
    assert_eq!(a.unsupported_linktypes(), vec![127]);
    let note = rantcp_trace::decode::unsupported_note(&[127]);
    assert!(
        note.starts_with("link type 127 is not decoded (supported: 0 NULL, 1 ETHERNET, "),
        "{note}"
    );
}

#[test]
fn timestamps_running_backwards_give_no_negative_times() {
    // A clock stepped back during the capture (or a merged, unsorted capture): packets are
    // analysed in file order as tshark does, but a duration, download time or RTT is never
    // negative (found by fuzzing: a reversed capture had duration_s -0.837 and RTT samples
    // below zero), and the frames that step back are counted.
    let segs = conversation();
    let n = segs.len() as i64;
    let mut p = Pcap::new(linktype::RAW, 65535);
    for (i, s) in segs.iter().enumerate() {
        p.record((n - i as i64) * 10_000_000, &s.ipv4(), None);
    }
    let mut rtt_us = Vec::new();
    let a = analyze(&p.bytes[..], Options::default(), 16, |c| {
        rtt_us.extend(c.rtt_us.iter().copied())
    })
    .unwrap();
    assert_eq!(a.frames.ts_backwards, n as u64 - 1);
    let s = &a.sessions[0];
    assert_eq!((s.first_ts, s.last_ts), (10_000_000, n * 10_000_000));
    assert!(s.download_time_ns().is_none_or(|t| t >= 0));
    for d in &s.dirs {
        assert!(
            d.rtt_ns.iter().chain(&d.ts_rtt_ns).all(|&t| t >= 0),
            "{d:?}"
        );
    }
    // No RTT sample, so no per-packet RTT either (0 = none).
    assert!(rtt_us.iter().all(|&r| r == 0), "{rtt_us:?}");
}
