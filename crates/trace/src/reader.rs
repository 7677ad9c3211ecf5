//! Capture files: classic libpcap (draft-ietf-opsawg-pcap §4–5, micro- and nanosecond magic,
//! either byte order) and pcapng (draft-ietf-opsawg-pcapng §4: section header, interface
//! description with `if_tsresol`/`if_tsoffset`, enhanced and simple packet blocks), read in one
//! streaming pass through `pcap-parser` with a bounded buffer, so a capture of any size needs a
//! few MiB of memory. The bytes read are hashed (BLAKE3) on the way, so the content hash costs no
//! second pass.
//!
//! A file that ends inside a record is *truncated*: every complete record before it is
//! delivered and [`ReadSummary::truncated`] says so. A file whose header is not pcap or pcapng
//! is refused with [`ReadError::NotACapture`] before any record is delivered.

use std::fmt;
use std::io::{self, Read};

use pcap_parser::pcapng::Block;
use pcap_parser::{create_reader, PcapBlockOwned, PcapError};

/// Link-layer header types (tcpdump.org "LINK-LAYER HEADER TYPES").
pub mod linktype {
    /// BSD loopback: 4-byte address family in host byte order.
    pub const NULL: u32 = 0;
    /// IEEE 802.3 Ethernet.
    pub const ETHERNET: u32 = 1;
    /// Raw IP as some BSDs number it.
    pub const RAW_BSD12: u32 = 12;
    pub const RAW_BSD14: u32 = 14;
    /// OpenBSD loopback: 4-byte address family in network byte order.
    pub const LOOP: u32 = 108;
    /// Raw IPv4 or IPv6.
    pub const RAW: u32 = 101;
    /// Linux "cooked" capture v1 (16-byte header).
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    /// Linux "cooked" capture v2 (20-byte header).
    pub const LINUX_SLL2: u32 = 276;
}

/// Largest block the reader accepts, bytes (pcapng blocks carry at most one 256 KiB packet in
/// practice; tcpdump's maximum snapshot length is 262144).
pub const MAX_BLOCK: usize = 1 << 20;
/// Initial read buffer, bytes (small inputs stay cheap); doubled up to [`MAX_BLOCK`] when a block does not fit.
const INITIAL_BUFFER: usize = 64 << 10;

/// One captured frame, borrowed from the reader's buffer.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// 1-based record number in the file, as Wireshark's `frame.number`.
    pub number: u64,
    /// Capture time, nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    /// Link type of the interface the frame was captured on.
    pub linktype: u32,
    /// Length of the frame on the wire, bytes (the record's original length).
    pub orig_len: u32,
    /// The captured bytes (at most the snapshot length).
    pub data: &'a [u8],
}

/// Container format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pcap,
    PcapNg,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Pcap => "pcap",
            Format::PcapNg => "pcapng",
        }
    }
}

/// Why a file could not be read at all.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    /// Empty, or the first bytes are neither a pcap nor a pcapng header.
    NotACapture(&'static str),
    /// A compressed file (gzip, zstd, …; Wireshark writes and reads them, tcpdump and
    /// pcap-parser do not): the name of the compression.
    Compressed(&'static str),
}

/// Magic numbers of the compressions a capture may come in (RFC 1952 §2.3.1 gzip, RFC 8878
/// §3.1.1 zstd, the LZ4 frame format, bzip2 and xz file headers), with the command that undoes
/// each.
const COMPRESSED: [(&[u8], &str); 5] = [
    (
        &[0x1f, 0x8b],
        "gzip-compressed; decompress it first: gunzip -k FILE",
    ),
    (
        &[0x28, 0xb5, 0x2f, 0xfd],
        "zstd-compressed; decompress it first: zstd -d FILE",
    ),
    (
        &[0x04, 0x22, 0x4d, 0x18],
        "lz4-compressed; decompress it first: lz4 -d FILE",
    ),
    (
        b"BZh",
        "bzip2-compressed; decompress it first: bunzip2 -k FILE",
    ),
    (
        &[0xfd, b'7', b'z', b'X', b'Z', 0],
        "xz-compressed; decompress it first: unxz -k FILE",
    ),
];

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotACapture(why) => write!(f, "not a pcap or pcapng file ({why})"),
            ReadError::Compressed(what) => write!(f, "not a pcap or pcapng file ({what})"),
        }
    }
}

impl std::error::Error for ReadError {}

/// What one pass over a file saw.
#[derive(Clone, Debug, Default)]
pub struct ReadSummary {
    pub format: Option<Format>,
    /// Records delivered.
    pub frames: u64,
    /// Bytes read from the file.
    pub bytes: u64,
    /// BLAKE3 of the bytes read, lower-case hex (the whole file unless reading stopped early).
    pub blake3: String,
    /// The file ended inside a record (or a block was malformed): records before it were read.
    pub truncated: bool,
    /// One line on why reading stopped early, when it did.
    pub stop_reason: Option<String>,
    /// Packet blocks of an interface never described (pcapng) and other skipped blocks.
    pub skipped_blocks: u64,
}

/// Reads with a running BLAKE3 of everything read.
struct HashingReader<R> {
    inner: R,
    hasher: blake3::Hasher,
    bytes: u64,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Reads until the buffer is full or the input ends: `create_reader` decides pcap or pcapng from
/// what its first `read` returns, so a short read (the peeked head, a pipe) must not look like a
/// short file.
struct Full<R>(R);

impl<R: Read> Read for Full<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.0.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}

struct Interface {
    linktype: u32,
    /// Timestamp units per second.
    resolution: u64,
    offset_s: i64,
}

/// Read every frame of a capture, calling `on_frame` for each in file order. The reader is
/// hashed and counted as it goes. Fails only when the file is unreadable or not a capture.
pub fn read_frames<R: Read + Send>(
    input: R,
    mut on_frame: impl FnMut(&Frame<'_>),
) -> Result<ReadSummary, ReadError> {
    let (hasher_state, mut summary) = {
        let mut hr = HashingReader {
            inner: input,
            hasher: blake3::Hasher::new(),
            bytes: 0,
        };
        let mut summary = ReadSummary::default();
        let result = read_inner(&mut hr, &mut on_frame, &mut summary);
        // Hash what is left unread (a truncated tail) so the hash is always of the whole file.
        let mut rest = [0u8; 8 << 10];
        loop {
            match hr.read(&mut rest) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
        result?;
        summary.bytes = hr.bytes;
        (hr.hasher, summary)
    };
    summary.blake3 = hasher_state.finalize().to_hex().to_string();
    Ok(summary)
}

fn read_inner<R: Read + Send>(
    input: &mut HashingReader<R>,
    on_frame: &mut impl FnMut(&Frame<'_>),
    summary: &mut ReadSummary,
) -> Result<(), ReadError> {
    let mut capacity = INITIAL_BUFFER;
    // The first bytes, to name a compressed file (they are read again through the chain).
    let mut head = [0u8; 6];
    let mut got = 0;
    while got < head.len() {
        match input.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    let head = &head[..got];
    let mut chained = Full(io::Cursor::new(head).chain(&mut *input));
    let mut reader = match create_reader(capacity, &mut chained) {
        Ok(r) => r,
        Err(PcapError::Eof) => return Err(ReadError::NotACapture("empty file")),
        Err(PcapError::ReadError) => {
            return Err(ReadError::Io(io::Error::other("read failed")));
        }
        Err(e) => {
            if let Some((_, what)) = COMPRESSED.iter().find(|(m, _)| head.starts_with(m)) {
                return Err(ReadError::Compressed(what));
            }
            return Err(ReadError::NotACapture(match e {
                PcapError::Incomplete(_) => "file shorter than a capture header",
                _ => "unknown magic number",
            }));
        }
    };
    // Byte offset in the file of the block `reader.data()` starts with.
    let mut pos = 0u64;
    // Byte order of the classic pcap file, once its header was read.
    let mut legacy_big_endian: Option<bool> = None;
    // Classic pcap state.
    let mut legacy_linktype = 0u32;
    let mut legacy_nanos = false;
    // pcapng state: interfaces of the current section.
    let mut ifaces: Vec<Interface> = Vec::new();
    // Byte order of the current pcapng section, once its header was read.
    let mut ng_big_endian: Option<bool> = None;
    let mut number = 0u64;
    loop {
        // Where the next record or block starts, for the stop reasons ("record 14 (byte 1234)").
        let is_ng = ng_big_endian.is_some();
        let at = |pos: u64, number: u64| {
            if is_ng {
                format!("the block at byte {pos} (after record {number})")
            } else {
                format!("record {} at byte {pos}", number + 1)
            }
        };
        let d = reader.data();
        if let Some(be) = legacy_big_endian {
            // A record's captured length beyond the 1 MiB the reader buffers is damage, not a
            // packet (libpcap refuses more than 262144, Wireshark likewise; we accept up to
            // MAX_BLOCK for TSO-sized frames). Without this check the reader would wait for more
            // bytes and report the damaged record as the end of the file.
            if d.len() >= 16 {
                let caplen = u32_at(d, 8, be);
                if caplen as usize > MAX_BLOCK - 16 {
                    return stop(
                        summary,
                        &format!(
                            "{}: captured length {caplen} is larger than the 1 MiB limit (damaged file)",
                            at(pos, number)
                        ),
                    );
                }
            }
        }
        // Every pcapng block is at least 12 bytes (type, length, length; pcapng §3.1) and a
        // multiple of 4. pcap-parser 0.17 subtracts 12 from the length before checking it for
        // some block types, which panics in builds with overflow checks (found by fuzzing):
        // check it here first.
        if let Some(be) = ng_big_endian {
            if d.len() >= 8 && d[..4] != [0x0a, 0x0d, 0x0d, 0x0a] {
                let len = u32_at(d, 4, be);
                let why = if len < 12 {
                    Some(format!("length {len} < 12"))
                } else if !len.is_multiple_of(4) {
                    Some(format!("length {len} is not a multiple of 4"))
                } else if len as usize > MAX_BLOCK {
                    Some(format!("length {len} is larger than the 1 MiB limit"))
                } else {
                    None
                };
                if let Some(why) = why {
                    return stop(
                        summary,
                        &format!("{}: malformed block ({why})", at(pos, number)),
                    );
                }
                // The length repeated at the end of the block must agree (pcapng §3.1).
                if d.len() >= len as usize {
                    let trailer = u32_at(d, len as usize - 4, be);
                    if trailer != len {
                        return stop(
                            summary,
                            &format!(
                                "{}: malformed block (length {len} at its start, {trailer} at its end)",
                                at(pos, number)
                            ),
                        );
                    }
                }
            }
        }
        match reader.next() {
            Ok((offset, block)) => {
                match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        summary.format = Some(Format::Pcap);
                        legacy_big_endian = Some(h.is_bigendian());
                        legacy_linktype = h.network.0 as u32;
                        legacy_nanos = h.is_nanosecond_precision();
                    }
                    PcapBlockOwned::Legacy(b) => {
                        number += 1;
                        let frac = if legacy_nanos {
                            b.ts_usec as i64
                        } else {
                            b.ts_usec as i64 * 1000
                        };
                        let caplen = (b.caplen as usize).min(b.data.len());
                        on_frame(&Frame {
                            number,
                            ts_ns: b.ts_sec as i64 * 1_000_000_000 + frac,
                            linktype: legacy_linktype,
                            orig_len: b.origlen,
                            data: &b.data[..caplen],
                        });
                        summary.frames += 1;
                    }
                    PcapBlockOwned::NG(block) => {
                        summary.format = Some(Format::PcapNg);
                        match block {
                            Block::SectionHeader(shb) => {
                                ifaces.clear();
                                ng_big_endian = Some(shb.big_endian());
                            }
                            Block::InterfaceDescription(idb) => ifaces.push(Interface {
                                linktype: idb.linktype.0 as u32,
                                // An invalid if_tsresol falls back to the default, microseconds.
                                resolution: idb.ts_resolution().unwrap_or(1_000_000),
                                offset_s: idb.ts_offset(),
                            }),
                            Block::EnhancedPacket(epb) => {
                                let Some(iface) = ifaces.get(epb.if_id as usize) else {
                                    summary.skipped_blocks += 1;
                                    reader.consume(offset);
                                    pos += offset as u64;
                                    continue;
                                };
                                number += 1;
                                let ts = ((epb.ts_high as u64) << 32) | epb.ts_low as u64;
                                let caplen = (epb.caplen as usize).min(epb.data.len());
                                on_frame(&Frame {
                                    number,
                                    ts_ns: ts_to_ns(ts, iface.resolution, iface.offset_s),
                                    linktype: iface.linktype,
                                    orig_len: epb.origlen,
                                    data: &epb.data[..caplen],
                                });
                                summary.frames += 1;
                            }
                            Block::SimplePacket(spb) => {
                                // No timestamp; interface 0 (pcapng §4.4).
                                let Some(iface) = ifaces.first() else {
                                    summary.skipped_blocks += 1;
                                    reader.consume(offset);
                                    pos += offset as u64;
                                    continue;
                                };
                                number += 1;
                                let caplen = (spb.origlen as usize).min(spb.data.len());
                                on_frame(&Frame {
                                    number,
                                    ts_ns: 0,
                                    linktype: iface.linktype,
                                    orig_len: spb.origlen,
                                    data: &spb.data[..caplen],
                                });
                                summary.frames += 1;
                            }
                            _ => {}
                        }
                    }
                }
                reader.consume(offset);
                pos += offset as u64;
            }
            Err(PcapError::Eof) => return Ok(()),
            Err(PcapError::Incomplete(_)) => {
                if reader.refill().is_err() {
                    return stop(summary, &format!("{}: read failed", at(pos, number)));
                }
            }
            Err(PcapError::UnexpectedEof) => {
                let left = reader.data().len();
                return stop(
                    summary,
                    &format!(
                        "file ends inside {} ({left} of its bytes present)",
                        at(pos, number)
                    ),
                );
            }
            Err(PcapError::BufferTooSmall) => {
                if capacity >= MAX_BLOCK {
                    return stop(
                        summary,
                        &format!("{}: larger than the 1 MiB limit", at(pos, number)),
                    );
                }
                capacity *= 2;
                reader.grow(capacity);
                if reader.refill().is_err() {
                    return stop(summary, &format!("{}: read failed", at(pos, number)));
                }
            }
            Err(e) => {
                let why = match e {
                    PcapError::HeaderNotRecognized => "unknown block".to_string(),
                    PcapError::ReadError => "read failed".to_string(),
                    // nom's error kinds name parser internals ("predicate verification"): say
                    // only that the block's fields do not parse.
                    _ => "malformed block (its fields do not parse)".to_string(),
                };
                return stop(summary, &format!("{}: {why}", at(pos, number)));
            }
        }
    }
}

#[inline]
fn u32_at(d: &[u8], i: usize, big_endian: bool) -> u32 {
    let b = [d[i], d[i + 1], d[i + 2], d[i + 3]];
    if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    }
}

fn stop(summary: &mut ReadSummary, why: &str) -> Result<(), ReadError> {
    summary.truncated = true;
    summary.stop_reason = Some(why.to_string());
    Ok(())
}

/// Timestamp units since the epoch (plus an offset in seconds) → nanoseconds, exact for every
/// power-of-ten or power-of-two resolution (pcapng §4.2 `if_tsresol`).
#[inline]
fn ts_to_ns(ts: u64, resolution: u64, offset_s: i64) -> i64 {
    let secs = ts / resolution;
    let frac = ts % resolution;
    let frac_ns = if resolution == 1_000_000_000 {
        frac
    } else {
        ((frac as u128 * 1_000_000_000) / resolution as u128) as u64
    };
    clamp_ts(
        (secs.min(i64::MAX as u64) as i64)
            .saturating_add(offset_s)
            .saturating_mul(1_000_000_000)
            .saturating_add(frac_ns as i64),
    )
}

/// Largest timestamp magnitude kept, ns (±146 years around 1970): a damaged timestamp is pinned
/// here so differences between any two timestamps fit in an `i64` (found by fuzzing: an
/// `if_tsoffset` of -2^63 overflowed the session code's time differences).
pub const MAX_TS_NS: i64 = 1 << 62;

#[inline]
fn clamp_ts(ns: i64) -> i64 {
    ns.clamp(-MAX_TS_NS, MAX_TS_NS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ts_to_ns_resolutions() {
        assert_eq!(ts_to_ns(1_500_000, 1_000_000, 0), 1_500_000_000);
        assert_eq!(ts_to_ns(1_500_000_123, 1_000_000_000, 2), 3_500_000_123);
        assert_eq!(ts_to_ns(3, 2, 0), 1_500_000_000); // 2^1 units per second
    }

    #[test]
    fn empty_and_garbage_are_not_captures() {
        let e = read_frames(&b""[..], |_| {}).unwrap_err();
        assert_eq!(e.to_string(), "not a pcap or pcapng file (empty file)");
        let e = read_frames(
            &b"hello world, this is not a capture file at all"[..],
            |_| {},
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "not a pcap or pcapng file (unknown magic number)"
        );
    }
}
