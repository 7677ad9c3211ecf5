//! The Internet checksum (RFC 1071): the 16-bit one's complement of the one's complement sum
//! of 16-bit big-endian words, used by the IPv4 header (RFC 791 §3.1), TCP (RFC 9293 §3.1,
//! over a pseudo-header) and UDP (RFC 768, over the same pseudo-header).
//!
//! [`Checksum`] accumulates in a 64-bit register and folds the carries once at the end
//! (RFC 1071 §2 (B) "deferred carries"), so summing is one add per 32 bits.

/// A running one's complement sum (RFC 1071 §1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checksum {
    sum: u64,
}

impl Checksum {
    pub const fn new() -> Self {
        Checksum { sum: 0 }
    }

    /// Add bytes as big-endian 16-bit words. An odd final byte is padded with a zero byte
    /// (RFC 1071 §1); so only the *last* slice added may have odd length.
    #[inline]
    pub fn add_bytes(&mut self, data: &[u8]) {
        let mut chunks = data.chunks_exact(4);
        let mut sum = self.sum;
        for c in &mut chunks {
            // Byte-order independence (RFC 1071 §2 (B)): summing 32-bit words and folding
            // gives the same 16-bit sum as summing 16-bit words.
            sum += u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64;
        }
        let rest = chunks.remainder();
        let mut i = 0;
        while i + 1 < rest.len() {
            sum += u16::from_be_bytes([rest[i], rest[i + 1]]) as u64;
            i += 2;
        }
        if i < rest.len() {
            sum += (rest[i] as u64) << 8;
        }
        self.sum = sum;
    }

    /// Add one 16-bit word.
    #[inline]
    pub fn add_u16(&mut self, v: u16) {
        self.sum += v as u64;
    }

    /// Add another running sum (of bytes that follow at an even offset).
    #[inline]
    pub fn add_checksum(&mut self, o: Checksum) {
        self.sum += o.sum() as u64;
    }

    /// Add a 32-bit value as two 16-bit words.
    #[inline]
    pub fn add_u32(&mut self, v: u32) {
        self.sum += v as u64;
    }

    /// The folded one's complement sum, *not* complemented (RFC 1071 §4.1 before `~sum`).
    #[inline]
    pub fn sum(self) -> u16 {
        let mut s = self.sum;
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    /// The checksum to put in a header: the complement of [`Checksum::sum`]. When the sum
    /// covers a header *including* its checksum field, a correct header gives 0 here.
    #[inline]
    pub fn finish(self) -> u16 {
        !self.sum()
    }
}

/// The Internet checksum of `data` (RFC 1071).
pub fn internet_checksum(data: &[u8]) -> u16 {
    let mut c = Checksum::new();
    c.add_bytes(data);
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 1071 §3 numerical example: the sum of 0001 f203 f4f5 f6f7 is ddf2.
    #[test]
    fn test_rfc1071_example() {
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let mut c = Checksum::new();
        c.add_bytes(&data);
        assert_eq!(c.sum(), 0xddf2);
        assert_eq!(internet_checksum(&data), 0x220d);
        // Any split at even offsets gives the same sum.
        for split in (0..=data.len()).step_by(2) {
            let mut c = Checksum::new();
            c.add_bytes(&data[..split]);
            c.add_bytes(&data[split..]);
            assert_eq!(c.sum(), 0xddf2, "split at {split}");
        }
    }

    /// The classic IPv4 header example (a UDP packet 192.168.0.1 -> 192.168.0.199):
    /// 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
    #[test]
    fn test_ipv4_header_example() {
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(internet_checksum(&h), 0xb861);
        h[10] = 0xb8;
        h[11] = 0x61;
        // Verifying: the checksum over a correct header including its checksum is zero.
        assert_eq!(internet_checksum(&h), 0);
    }

    #[test]
    fn test_odd_length_pads_with_zero() {
        assert_eq!(
            internet_checksum(&[0x12, 0x34, 0x56]),
            internet_checksum(&[0x12, 0x34, 0x56, 0])
        );
        assert_eq!(internet_checksum(&[0xab]), !0xab00);
        assert_eq!(internet_checksum(&[]), 0xffff);
    }

    #[test]
    fn test_carries_fold() {
        // 0xffff + 0xffff = 0x1fffe -> fold -> 0xffff; many words still fold correctly.
        let data = vec![0xffu8; 100_000];
        let mut c = Checksum::new();
        c.add_bytes(&data);
        assert_eq!(c.sum(), 0xffff);
        let mut c = Checksum::new();
        c.add_u32(0xffff_ffff);
        c.add_u16(0x0001);
        // ffff + ffff = 1fffe -> ffff; ffff + 0001 = 10000 -> 0001.
        assert_eq!(c.sum(), 0x0001);
    }
}
