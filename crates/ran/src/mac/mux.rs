//! Downlink multiplexing of one UE's transport block among its logical channels (the eNB side
//! of TS 36.321 §6.1.2 MAC PDU assembly; the split itself is implementation-specific, like
//! ns-3's per-LC `NotifyTxOpportunity` calls): STATUS and retransmissions of every channel
//! first, then new data, channels in the caller's priority order. Each channel that gets bytes
//! costs one MAC subheader: 2 bytes (7-bit L) for a piece below 128 bytes, 3 bytes (15-bit L)
//! otherwise.

use super::sap::{BufferStatus, Rnti, TxOpportunity};

/// MAC subheader bytes for a MAC SDU of `len` bytes (TS 36.321 §6.1.2: R/F2/E/LCID/F/L).
pub fn mac_subheader_bytes(len: u32) -> u32 {
    if len >= 128 {
        3
    } else {
        2
    }
}

/// Largest MAC SDU `L` with `L + mac_subheader_bytes(L) <= budget`.
pub fn max_sdu(budget: u32) -> u32 {
    if budget >= 131 {
        budget - 3
    } else {
        budget.saturating_sub(2).min(127)
    }
}

/// Splits `tb_bytes` among `channels` (priority order), appending one [`TxOpportunity`] per
/// served channel to `out`. Returns the MAC subheader bytes used; the rest of the TB that is
/// not in an opportunity or a subheader is padding.
pub fn dl_tx_opportunities(
    tb_bytes: u32,
    rnti: Rnti,
    harq_id: u8,
    channels: &[BufferStatus],
    out: &mut Vec<TxOpportunity>,
) -> u32 {
    split(tb_bytes, rnti, harq_id, channels, out, true)
}

/// NR variant: the RLC entities count one MAC subheader per RLC PDU inside their opportunity
/// (`RlcConfig::mac_subheader_per_pdu`), so the TB is split without per-channel subheaders.
/// Returns 0.
pub fn dl_tx_opportunities_nr(
    tb_bytes: u32,
    rnti: Rnti,
    harq_id: u8,
    channels: &[BufferStatus],
    out: &mut Vec<TxOpportunity>,
) -> u32 {
    split(tb_bytes, rnti, harq_id, channels, out, false)
}

fn split(
    tb_bytes: u32,
    rnti: Rnti,
    harq_id: u8,
    channels: &[BufferStatus],
    out: &mut Vec<TxOpportunity>,
    lte: bool,
) -> u32 {
    let sub = |len: u32| if lte { mac_subheader_bytes(len) } else { 0 };
    let max = |budget: u32| if lte { max_sdu(budget) } else { budget };
    let start = out.len();
    let mut cap = tb_bytes;
    for pass in 0..2 {
        for bs in channels {
            let want = if pass == 0 {
                bs.priority_bytes()
            } else {
                bs.tx_queue_bytes as u64
            };
            if want == 0 {
                continue;
            }
            let existing = out[start..]
                .iter()
                .position(|o| o.lcid == bs.lcid)
                .map(|i| start + i);
            let cur = existing.map_or(0, |i| out[i].bytes);
            let cur_sub = if existing.is_some() { sub(cur) } else { 0 };
            let budget = cap + cur + cur_sub;
            let new_total = ((cur as u64 + want).min(max(budget) as u64)) as u32;
            if new_total <= cur {
                continue;
            }
            cap = budget - new_total - sub(new_total);
            match existing {
                Some(i) => out[i].bytes = new_total,
                None => out.push(TxOpportunity {
                    bytes: new_total,
                    rnti,
                    lcid: bs.lcid,
                    harq_id,
                }),
            }
        }
    }
    out[start..].iter().map(|o| sub(o.bytes)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bs(lcid: u8, tx: u32, retx: u32, status: u32) -> BufferStatus {
        BufferStatus {
            rnti: 1,
            lcid,
            tx_queue_bytes: tx,
            retx_queue_bytes: retx,
            status_pdu_bytes: status,
            ..Default::default()
        }
    }

    #[test]
    fn test_dl_mux_priority_then_new_data() {
        let mut out = Vec::new();
        // LC 3 has 200 new bytes, LC 4 a 4-byte STATUS and 100 bytes of retransmission.
        let ov = dl_tx_opportunities(250, 1, 5, &[bs(3, 200, 0, 0), bs(4, 0, 100, 4)], &mut out);
        // Pass 1: LC 4 gets 104 (+2-byte subheader). Pass 2: LC 3 gets 250 − 106 − 3 = 141.
        assert_eq!(
            out.iter().map(|o| (o.lcid, o.bytes)).collect::<Vec<_>>(),
            vec![(4, 104), (3, 141)]
        );
        assert_eq!(ov, 2 + 3);
        assert_eq!(out.iter().map(|o| o.bytes).sum::<u32>() + ov, 250);
        // Everything fits: no more than the backlog is offered.
        out.clear();
        let ov = dl_tx_opportunities(10_000, 1, 0, &[bs(3, 200, 50, 0)], &mut out);
        assert_eq!((out[0].bytes, ov), (250, 3));
        // NR: subheaders are counted by RLC per PDU, the split is plain bytes.
        let mut nr = Vec::new();
        assert_eq!(
            dl_tx_opportunities_nr(250, 1, 5, &[bs(3, 200, 0, 0), bs(4, 0, 100, 4)], &mut nr),
            0
        );
        assert_eq!(
            nr.iter().map(|o| (o.lcid, o.bytes)).collect::<Vec<_>>(),
            vec![(4, 104), (3, 146)]
        );
        // Tiny TB.
        out.clear();
        assert_eq!(
            dl_tx_opportunities(2, 1, 0, &[bs(3, 200, 0, 0)], &mut out),
            0
        );
        assert!(out.is_empty());
        // Subheader grows from 2 to 3 bytes when a channel's piece crosses 128 bytes.
        out.clear();
        dl_tx_opportunities(130, 1, 0, &[bs(3, 1000, 100, 0)], &mut out);
        assert_eq!(out[0].bytes, 127);
    }
}
