//! Fuzz the capture reader and the TCP trace analysis (rantcp-trace): pcap/pcapng container
//! parsing (draft-ietf-opsawg-pcap, -pcapng), link/IP/TCP header decoding (RFC 791, RFC 8200,
//! RFC 9293 §3.1–3.2) and the per-packet analysis. Any input must give a result or a clean
//! "not a capture" error, never a panic; the row count must equal the TCP frame count. The same
//! bytes are also decoded as a single frame of every supported link type.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rantcp_trace::{analyze, decode, Options};

const LINKTYPES: [u32; 9] = [0, 1, 12, 14, 101, 108, 113, 228, 276];

fuzz_target!(|data: &[u8]| {
    let mut rows = 0usize;
    if let Ok(a) = analyze(data, Options { idle_split_ns: 1_000_000 }, 7, |c| rows += c.len()) {
        assert_eq!(rows as u64, a.frames.tcp);
        assert_eq!(a.frames.tcp + a.frames.not_tcp + a.frames.malformed, a.frames.frames);
        let per_session: u64 = a.sessions.iter().map(|s| s.dirs[0].packets + s.dirs[1].packets).sum();
        assert_eq!(per_session, a.frames.tcp);
    }
    for lt in LINKTYPES {
        if let Ok(s) = decode::decode(lt, data, data.len() as u32) {
            assert!(s.payload_len <= s.ip_len);
        }
    }
});
