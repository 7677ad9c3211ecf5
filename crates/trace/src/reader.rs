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
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotACapture(why) => write!(f, "not a pcap or pcapng file ({why})"),
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
    let mut reader = match create_reader(capacity, &mut *input) {
        Ok(r) => r,
        Err(PcapError::Eof) => return Err(ReadError::NotACapture("empty file")),
        Err(PcapError::ReadError) => {
            return Err(ReadError::Io(io::Error::other("read failed")));
        }
        Err(PcapError::Incomplete(_)) => {
            return Err(ReadError::NotACapture("file shorter than a capture header"))
        }
        Err(_) => return Err(ReadError::NotACapture("unknown magic number")),
    };
    // Classic pcap state.
    let mut legacy_linktype = 0u32;
    let mut legacy_nanos = false;
    // pcapng state: interfaces of the current section.
    let mut ifaces: Vec<Interface> = Vec::new();
    // Byte order of the current pcapng section, once its header was read.
    let mut ng_big_endian: Option<bool> = None;
    let mut number = 0u64;
    loop {
        // Every pcapng block is at least 12 bytes (type, length, length; pcapng §3.1). pcap-parser
        // 0.17 subtracts 12 from the length before checking it for some block types, which
        // panics in builds with overflow checks (found by fuzzing): check it here first.
        if let Some(be) = ng_big_endian {
            let d = reader.data();
            if d.len() >= 8 && d[..4] != [0x0a, 0x0d, 0x0d, 0x0a] {
                let l = [d[4], d[5], d[6], d[7]];
                let len = if be {
                    u32::from_be_bytes(l)
                } else {
                    u32::from_le_bytes(l)
                };
                if len < 12 {
                    return stop(summary, &format!("malformed block (length {len} < 12)"));
                }
            }
        }
        match reader.next() {
            Ok((offset, block)) => {
                match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        summary.format = Some(Format::Pcap);
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
            }
            Err(PcapError::Eof) => return Ok(()),
            Err(PcapError::Incomplete(_)) => {
                if reader.refill().is_err() {
                    return stop(summary, "read failed");
                }
            }
            Err(PcapError::UnexpectedEof) => return stop(summary, "file ends inside a record"),
            Err(PcapError::BufferTooSmall) => {
                if capacity >= MAX_BLOCK {
                    return stop(summary, "a record is larger than 1 MiB");
                }
                capacity *= 2;
                reader.grow(capacity);
                if reader.refill().is_err() {
                    return stop(summary, "read failed");
                }
            }
            Err(e) => {
                let why = match e {
                    PcapError::HeaderNotRecognized => "unknown block".to_string(),
                    PcapError::ReadError => "read failed".to_string(),
                    PcapError::NomError(_, k) | PcapError::OwnedNomError(_, k) => {
                        format!("malformed block ({})", k.description())
                    }
                    _ => "malformed block".to_string(),
                };
                return stop(summary, &why);
            }
        }
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
    (secs as i64 + offset_s)
        .saturating_mul(1_000_000_000)
        .saturating_add(frac_ns as i64)
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
