//! pcap capture size (issue 20): records keep the headers only by default
//! (`output.pcap_snaplen = 128`), every record with the packet's real length, and the whole
//! packet with `output.pcap_snaplen = "full"`.

use rantcp_scenario::{load, resolve_source, Run};
use rantcp_wire::pcap;
use std::path::{Path, PathBuf};

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rantcp-pcap-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_p2p(dir: &Path, snaplen: Option<&str>) -> Vec<u8> {
    let (src, text) = resolve_source("builtin:p2p-bulk").unwrap();
    let mut ov = vec![
        ("duration".to_string(), "1s".to_string()),
        ("output.pcap".to_string(), "[\"sender-eth0\"]".to_string()),
    ];
    if let Some(s) = snaplen {
        ov.push(("output.pcap_snaplen".into(), s.into()));
    }
    let cfg = load(&text, &src, &ov, None).unwrap();
    let mut run = Run::new(cfg, Some(dir)).unwrap();
    run.run_to_end().unwrap();
    run.finish(0.0).unwrap();
    std::fs::read(dir.join("pcap/sender-eth0.pcap")).unwrap()
}

/// (snaplen of the header, [(incl_len, orig_len, IPv4 total length from the bytes)]).
fn records(file: &[u8]) -> (u32, Vec<(usize, u32, u32)>) {
    let rd = pcap::read(file).unwrap();
    let snap = rd.snaplen;
    let recs = rd
        .map(|r| {
            let r = r.unwrap();
            let total = u16::from_be_bytes([r.data[2], r.data[3]]) as u32;
            (r.data.len(), r.orig_len, total)
        })
        .collect();
    (snap, recs)
}

#[test]
fn default_keeps_headers_only_with_the_real_length() {
    let d = temp_dir("default");
    let (snap, recs) = records(&run_p2p(&d, None));
    assert_eq!(snap, 128);
    let data = recs.iter().filter(|r| r.1 > 128).count();
    assert!(data > 1000, "full-size data segments: {data}");
    for &(incl, orig, total) in &recs {
        assert_eq!(orig, total, "orig_len is the IP packet's length");
        assert_eq!(incl, orig.min(128) as usize);
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn full_keeps_whole_packets_and_a_number_sets_the_length() {
    let d = temp_dir("full");
    let full = run_p2p(&d, Some("full"));
    let (snap, recs) = records(&full);
    assert_eq!(snap, 65535);
    assert!(recs.iter().all(|&(incl, orig, _)| incl == orig as usize));
    let d2 = temp_dir("200");
    let (snap, recs200) = records(&run_p2p(&d2, Some("200")));
    assert_eq!(snap, 200);
    assert_eq!(recs200.len(), recs.len(), "the same packets");
    assert!(recs200
        .iter()
        .all(|&(incl, orig, _)| incl == orig.min(200) as usize));
    // 1 s of a 50 Mbit/s bulk flow: whole packets are ~12x the headers-only file.
    let headers = run_p2p(&d2, None).len();
    assert!(full.len() > 8 * headers, "{} vs {headers}", full.len());
    std::fs::remove_dir_all(d).unwrap();
    std::fs::remove_dir_all(d2).unwrap();
}

#[test]
fn snaplen_outside_its_range_is_refused() {
    let (src, text) = resolve_source("builtin:p2p-bulk").unwrap();
    for (v, msg) in [
        ("119", "output.pcap_snaplen: 119 is out of range (allowed: bytes per packet from 120 to 65535, or \"full\")"),
        ("65536", "output.pcap_snaplen: 65536 is out of range (allowed: bytes per packet from 120 to 65535, or \"full\")"),
        ("-1", "output.pcap_snaplen: -1 is out of range (allowed: bytes per packet from 120 to 65535, or \"full\")"),
        ("half", "output.pcap_snaplen: \"half\" is not bytes per packet from 120 to 65535, or \"full\""),
        ("1.5", "output.pcap_snaplen: invalid type: floating point `1.5`, expected bytes per packet from 120 to 65535, or \"full\""),
    ] {
        let e = load(&text, &src, &[("output.pcap_snaplen".into(), v.into())], None).unwrap_err();
        assert_eq!(e.to_string(), msg);
    }
}
