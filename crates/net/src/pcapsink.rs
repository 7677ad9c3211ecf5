//! Per-interface capture. Records reach an interface out of timestamp order (a packet is
//! recorded on egress when it is accepted, with its future start-of-transmission time, while
//! arrivals are recorded at their arrival time), so each sink holds a small reorder heap and
//! writes a record once no earlier record can still come: every later record has a timestamp
//! at or after the current simulation time.

use rantcp_core::Time;
use rantcp_wire::pcap::PcapWriter;
use rantcp_wire::Packet;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;

pub(crate) struct PcapSink {
    writer: PcapWriter<File>,
    pending: BinaryHeap<Reverse<(Time, u64, PacketOrd)>>,
    seq: u64,
}

/// Packet wrapper ordered by nothing (ties are broken by the sequence number first).
pub(crate) struct PacketOrd(Packet);
impl PartialEq for PacketOrd {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for PacketOrd {}
impl PartialOrd for PacketOrd {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for PacketOrd {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl PcapSink {
    pub(crate) fn create(path: &std::path::Path, snaplen: u32) -> std::io::Result<Self> {
        // PcapWriter buffers internally.
        let f = File::create(path)?;
        Ok(PcapSink {
            writer: PcapWriter::new(f, snaplen)?,
            pending: BinaryHeap::new(),
            seq: 0,
        })
    }
    pub(crate) fn record(&mut self, now: Time, ts: Time, p: &Packet) -> std::io::Result<()> {
        self.pending.push(Reverse((ts, self.seq, PacketOrd(*p))));
        self.seq += 1;
        self.flush_before(now)
    }
    pub(crate) fn flush_before(&mut self, now: Time) -> std::io::Result<()> {
        while let Some(Reverse((ts, _, _))) = self.pending.peek() {
            if *ts >= now {
                break;
            }
            let Reverse((ts, _, p)) = self.pending.pop().unwrap();
            self.writer.write_packet(ts.as_nanos(), &p.0)?;
        }
        Ok(())
    }
    pub(crate) fn finish(&mut self) -> std::io::Result<()> {
        self.flush_before(Time::MAX)?;
        self.writer.flush()
    }
}
