//! pcap files of simulated packets, for Wireshark/tshark. The format is classic libpcap
//! (draft-ietf-opsawg-pcap §4 file header, §5 packet records) with the nanosecond-resolution
//! magic `0xa1b23c4d`, written little-endian so files are byte-identical on every machine. The
//! link type is LINKTYPE_RAW (101: each record is a bare IPv4/IPv6 packet; tcpdump.org
//! "LINK-LAYER HEADER TYPES") by default, or LINKTYPE_IPV4 (228).
//!
//! Records carry the full IPv4 packet of [`Packet::to_bytes`] (RFC 791, RFC 9293, RFC 768),
//! truncated to the snapshot length with the original length kept in `orig_len`. Writing
//! allocates nothing per packet: headers are built on the stack and zero payload is copied from
//! a static buffer into a buffered writer.

use std::io::{self, BufWriter, Write};

use crate::serial::MAX_HEADER_LEN;
use crate::{Packet, IPV4_MAX_LEN};

/// Magic number of a nanosecond-resolution pcap file.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Magic number of a microsecond-resolution pcap file.
pub const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// LINKTYPE_RAW: raw IPv4 or IPv6, no link-layer header.
pub const LINKTYPE_RAW: u32 = 101;
/// LINKTYPE_IPV4: raw IPv4, no link-layer header.
pub const LINKTYPE_IPV4: u32 = 228;
/// File header length, bytes.
pub const FILE_HEADER_LEN: usize = 24;
/// Per-record header length, bytes.
pub const RECORD_HEADER_LEN: usize = 16;
/// Snapshot length used when 0 is asked for: the largest IPv4 packet.
pub const DEFAULT_SNAPLEN: u32 = IPV4_MAX_LEN;

const NS_PER_SEC: u64 = 1_000_000_000;
static ZEROS: [u8; 4096] = [0; 4096];

/// Writes packets to a pcap stream. Buffered internally; call [`PcapWriter::finish`] (or
/// [`PcapWriter::flush`]) to see write errors, as dropping flushes and discards them.
pub struct PcapWriter<W: Write> {
    out: BufWriter<W>,
    snaplen: u32,
    packets: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Start a LINKTYPE_RAW file with snapshot length `snaplen` bytes (0: [`DEFAULT_SNAPLEN`]);
    /// writes the file header.
    pub fn new(w: W, snaplen: u32) -> io::Result<Self> {
        Self::with_linktype(w, snaplen, LINKTYPE_RAW)
    }

    /// As [`PcapWriter::new`] with a chosen link type ([`LINKTYPE_RAW`] or [`LINKTYPE_IPV4`]).
    pub fn with_linktype(w: W, snaplen: u32, linktype: u32) -> io::Result<Self> {
        let snaplen = if snaplen == 0 {
            DEFAULT_SNAPLEN
        } else {
            snaplen
        };
        let mut out = BufWriter::with_capacity(1 << 16, w);
        out.write_all(&file_header(snaplen, linktype))?;
        Ok(PcapWriter {
            out,
            snaplen,
            packets: 0,
        })
    }

    /// Snapshot length, bytes: records hold at most this many bytes of each packet.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// Packets written so far.
    pub fn packets_written(&self) -> u64 {
        self.packets
    }

    /// Append one packet seen at `ts_ns` nanoseconds (since the run started). Fails with
    /// `InvalidInput`, writing nothing, if the packet exceeds the IPv4 maximum length.
    pub fn write_packet(&mut self, ts_ns: u64, p: &Packet) -> io::Result<()> {
        let orig_len = p.len();
        if orig_len > IPV4_MAX_LEN {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("packet of {orig_len} bytes exceeds the IPv4 maximum"),
            ));
        }
        let mut hdr = [0u8; MAX_HEADER_LEN];
        let n = p.emit_headers(&mut hdr);
        let incl = orig_len.min(self.snaplen) as usize;
        self.record_header(ts_ns, incl as u32, orig_len)?;
        self.out.write_all(&hdr[..n.min(incl)])?;
        let mut zeros = incl.saturating_sub(n);
        while zeros > 0 {
            let k = zeros.min(ZEROS.len());
            self.out.write_all(&ZEROS[..k])?;
            zeros -= k;
        }
        self.packets += 1;
        Ok(())
    }

    /// Append a record of arbitrary bytes (truncated to the snapshot length) at `ts_ns`.
    pub fn write_raw(&mut self, ts_ns: u64, data: &[u8]) -> io::Result<()> {
        let incl = data.len().min(self.snaplen as usize);
        self.record_header(ts_ns, incl as u32, data.len() as u32)?;
        self.out.write_all(&data[..incl])?;
        self.packets += 1;
        Ok(())
    }

    fn record_header(&mut self, ts_ns: u64, incl: u32, orig: u32) -> io::Result<()> {
        let mut r = [0u8; RECORD_HEADER_LEN];
        r[0..4].copy_from_slice(&((ts_ns / NS_PER_SEC) as u32).to_le_bytes());
        r[4..8].copy_from_slice(&((ts_ns % NS_PER_SEC) as u32).to_le_bytes());
        r[8..12].copy_from_slice(&incl.to_le_bytes());
        r[12..16].copy_from_slice(&orig.to_le_bytes());
        self.out.write_all(&r)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flush and return the underlying writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// The 24-byte file header (little-endian, nanosecond magic, version 2.4).
pub fn file_header(snaplen: u32, linktype: u32) -> [u8; FILE_HEADER_LEN] {
    let mut h = [0u8; FILE_HEADER_LEN];
    h[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes()); // version_major
    h[6..8].copy_from_slice(&4u16.to_le_bytes()); // version_minor
                                                  // thiszone (8..12) and sigfigs (12..16) are zero.
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h[20..24].copy_from_slice(&linktype.to_le_bytes());
    h
}

/// One record of a pcap file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Timestamp, nanoseconds (microsecond files are scaled up).
    pub ts_ns: u64,
    /// Length of the packet on the wire, bytes.
    pub orig_len: u32,
    /// The captured bytes (`orig_len` or fewer).
    pub data: &'a [u8],
}

/// Iterates over the records of an in-memory pcap file (see [`read`]).
#[derive(Clone, Debug)]
pub struct PcapReader<'a> {
    pub snaplen: u32,
    pub linktype: u32,
    /// Nanosecond timestamps (else microseconds).
    pub nanos: bool,
    big_endian: bool,
    rest: &'a [u8],
}

fn invalid(msg: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Read a classic pcap file held in memory (either byte order, micro- or nanosecond magic);
/// iterate the result for its records. Meant for tests and tools.
pub fn read(bytes: &[u8]) -> io::Result<PcapReader<'_>> {
    if bytes.len() < FILE_HEADER_LEN {
        return Err(invalid("pcap file header truncated"));
    }
    let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
    let (nanos, big_endian) = if magic == MAGIC_NANOS.to_le_bytes() {
        (true, false)
    } else if magic == MAGIC_NANOS.to_be_bytes() {
        (true, true)
    } else if magic == MAGIC_MICROS.to_le_bytes() {
        (false, false)
    } else if magic == MAGIC_MICROS.to_be_bytes() {
        (false, true)
    } else {
        return Err(invalid("not a pcap file (bad magic)"));
    };
    let r = PcapReader {
        snaplen: 0,
        linktype: 0,
        nanos,
        big_endian,
        rest: &bytes[FILE_HEADER_LEN..],
    };
    Ok(PcapReader {
        snaplen: r.u32_at(bytes, 16),
        linktype: r.u32_at(bytes, 20),
        ..r
    })
}

impl PcapReader<'_> {
    fn u32_at(&self, b: &[u8], at: usize) -> u32 {
        let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.big_endian {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }
}

impl<'a> Iterator for PcapReader<'a> {
    type Item = io::Result<Record<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        if self.rest.len() < RECORD_HEADER_LEN {
            self.rest = &[];
            return Some(Err(invalid("pcap record header truncated")));
        }
        let b = self.rest;
        let sec = self.u32_at(b, 0) as u64;
        let frac = self.u32_at(b, 4) as u64;
        let incl = self.u32_at(b, 8) as usize;
        let orig_len = self.u32_at(b, 12);
        if b.len() - RECORD_HEADER_LEN < incl {
            self.rest = &[];
            return Some(Err(invalid("pcap record data truncated")));
        }
        let data = &b[RECORD_HEADER_LEN..RECORD_HEADER_LEN + incl];
        self.rest = &b[RECORD_HEADER_LEN + incl..];
        let ts_ns = sec * NS_PER_SEC + if self.nanos { frac } else { frac * 1000 };
        Some(Ok(Record {
            ts_ns,
            orig_len,
            data,
        }))
    }
}
