//! Radio time series of a [`super::RanDevice`] (design.md §6): one row per UE per sample with
//! channel (SINR, CQI, MCS, LOS, position), MAC (TBS, PRBs, HARQ new/retx/failed per interval),
//! RLC (queue bytes, cumulative drops) and uplink request/grant counters; one row per cell per
//! sample with PRB and PDCCH use over the interval.

use super::ue::ENB;
use super::RanDevice;
use rantcp_core::Time;

/// Per-UE radio samples (columns of equal length).
#[derive(Clone, Debug, Default)]
pub struct UeSeries {
    pub time_s: Vec<f64>,
    pub rnti: Vec<i64>,
    pub cell: Vec<i64>,
    /// Wideband SINR at the sample instant, fast fading included (dB).
    pub sinr_db: Vec<f64>,
    /// Mean SINR without fast fading (dB).
    pub mean_sinr_db: Vec<f64>,
    /// Last CQI the scheduler used, and the MCS it mapped to.
    pub cqi: Vec<i64>,
    pub mcs: Vec<i64>,
    pub los: Vec<i64>,
    pub distance_m: Vec<f64>,
    pub x_m: Vec<f64>,
    pub y_m: Vec<f64>,
    /// Mean DL transport block of the new transmissions in the interval (bytes; 0 if none).
    pub tbs_bytes: Vec<f64>,
    /// DL PHY rate of new transport blocks over the interval (bit/s).
    pub dl_phy_bps: Vec<f64>,
    /// DL PRBs used in the interval (new + retx).
    pub prbs: Vec<i64>,
    pub harq_new: Vec<i64>,
    pub harq_retx: Vec<i64>,
    pub harq_failed: Vec<i64>,
    /// eNB RLC backlog of this UE (new data + retransmissions + STATUS, bytes).
    pub rlc_queue_bytes: Vec<i64>,
    /// SDUs dropped at the eNB RLC byte limit so far.
    pub rlc_drops: Vec<i64>,
    /// UE uplink FIFO bytes.
    pub ul_queue_bytes: Vec<i64>,
    /// Cumulative: SRs received, BSRs decoded, UL grants (new data) issued.
    pub sr: Vec<i64>,
    pub bsr: Vec<i64>,
    pub ul_grants: Vec<i64>,
    pub ul_tbs_bytes: Vec<f64>,
}

/// Per-cell samples.
#[derive(Clone, Debug, Default)]
pub struct CellSeries {
    pub time_s: Vec<f64>,
    pub cell: Vec<i64>,
    /// Fraction of the DL PRBs of the interval's DL slots that carried data.
    pub dl_prb_util: Vec<f64>,
    /// Fraction of the UL PRBs of the interval's UL slots that were granted.
    pub ul_prb_util: Vec<f64>,
    /// DCIs per slot over the interval, and as a fraction of the PDCCH budget.
    pub pdcch_per_slot: Vec<f64>,
    pub pdcch_util: Vec<f64>,
}

/// Per-packet and per-subframe rows ([`super::RanConfig::record_packet_series`]).
#[derive(Clone, Debug, Default)]
pub struct PacketSeries {
    pub ul_delay: UlDelaySeries,
    pub pdcch: PdcchSeries,
}

/// One row per uplink IP packet delivered at the eNB: the uplink LTE packet delay (arrival in
/// the UE's uplink buffer → delivered by the eNB's RLC).
#[derive(Clone, Debug, Default)]
pub struct UlDelaySeries {
    pub time_s: Vec<f64>,
    pub rnti: Vec<i64>,
    pub delay_s: Vec<f64>,
}

/// One row per subframe (slot) of a cell up to the last one its MAC loop ran: the DCIs sent on
/// its PDCCH (0 for the slots the device slept through, written when it wakes).
#[derive(Clone, Debug, Default)]
pub struct PdcchSeries {
    pub time_s: Vec<f64>,
    pub cell: Vec<i64>,
    pub dcis: Vec<i64>,
}

impl RanDevice {
    /// Take the per-packet and per-subframe rows so far (see [`PacketSeries`]).
    pub fn take_packet_series(&mut self) -> PacketSeries {
        std::mem::take(&mut self.st.packet_series)
    }
    /// [`PacketSeries`] rows waiting to be taken.
    pub fn packet_series_rows(&self) -> usize {
        self.st.packet_series.ul_delay.time_s.len() + self.st.packet_series.pdcch.time_s.len()
    }
    /// Whether the device records [`PacketSeries`] rows.
    pub fn records_packet_series(&self) -> bool {
        self.st.cfg.record_packet_series
    }

    /// Take the UE and cell samples taken so far, leaving the series empty (a long run's
    /// owner drains them in batches so memory stays flat with run length).
    pub fn take_series(&mut self) -> (UeSeries, CellSeries) {
        (
            std::mem::take(&mut self.ue_series),
            std::mem::take(&mut self.cell_series),
        )
    }

    pub(super) fn take_sample(&mut self, now: Time) {
        let st = &mut self.st;
        let t = now.as_secs_f64();
        let iv = now.saturating_since(st.last_sample).as_secs_f64().max(1e-9);
        st.last_sample = now;
        let n_prb = st.radio.carrier().n_prb as f64;
        let s = &mut self.ue_series;
        for i in 0..st.ues.len() {
            let rnti = st.ues[i].rnti;
            let sinr = st.radio.sinr_db(rnti, now);
            let ls = st.radio.large_scale(rnti);
            let u = &mut st.ues[i];
            let c = u.counters();
            let p = &u.prev;
            s.time_s.push(t);
            s.rnti.push(rnti as i64);
            s.cell.push(u.cell as i64);
            s.sinr_db.push(sinr);
            s.mean_sinr_db.push(ls.mean_sinr_db);
            s.cqi.push(u.last_cqi as i64);
            s.mcs.push(u.last_mcs as i64);
            s.los.push(ls.los as i64);
            s.distance_m.push(ls.distance_m);
            s.x_m.push(ls.position.x);
            s.y_m.push(ls.position.y);
            let new = c.dl_tb_new - p.dl_tb_new;
            let bytes = c.dl_tb_bytes - p.dl_tb_bytes;
            s.tbs_bytes.push(if new > 0 {
                bytes as f64 / new as f64
            } else {
                0.0
            });
            s.dl_phy_bps.push(bytes as f64 * 8.0 / iv);
            s.prbs.push((c.dl_prbs - p.dl_prbs) as i64);
            s.harq_new.push(new as i64);
            s.harq_retx.push((c.dl_tb_retx - p.dl_tb_retx) as i64);
            s.harq_failed.push((c.dl_tb_failed - p.dl_tb_failed) as i64);
            let enb_rlc = &u.rlc[ENB];
            s.rlc_queue_bytes.push(enb_rlc.total_bytes(now) as i64);
            s.rlc_drops.push(enb_rlc.counters().sdus_dropped as i64);
            s.ul_queue_bytes.push(u.ul_buf.bytes() as i64);
            s.sr.push(c.sr_rx as i64);
            s.bsr.push(c.bsr_rx as i64);
            s.ul_grants.push(c.ul_grants as i64);
            let uln = c.ul_tb_new - p.ul_tb_new;
            s.ul_tbs_bytes.push(if uln > 0 {
                (c.ul_tb_bytes - p.ul_tb_bytes) as f64 / uln as f64
            } else {
                0.0
            });
            u.prev = c;
        }
        let max_dci = st.cfg.pdcch_grants_per_slot.max(1) as f64;
        let s = &mut self.cell_series;
        for (ci, c) in st.cells.iter_mut().enumerate() {
            if c.ues.is_empty() {
                continue;
            }
            let now_v = c.totals();
            let mut d = [0f64; 6];
            for k in 0..6 {
                d[k] = (now_v[k] - c.prev[k]) as f64;
            }
            c.prev = now_v;
            // Slots the device slept through carried nothing: count them as idle.
            let slots_iv = (iv / st.slot.as_secs_f64()).round().max(1.0);
            let dl_frac = if d[0] > 0.0 { d[1] / d[0] } else { 1.0 };
            let ul_frac = if d[0] > 0.0 { d[3] / d[0] } else { 0.0 };
            s.time_s.push(t);
            s.cell.push(ci as i64);
            s.dl_prb_util
                .push(d[2] / (slots_iv * dl_frac * n_prb).max(1.0));
            s.ul_prb_util.push(if ul_frac > 0.0 {
                d[4] / (slots_iv * ul_frac * n_prb).max(1.0)
            } else {
                0.0
            });
            s.pdcch_per_slot.push(d[5] / slots_iv);
            s.pdcch_util.push(d[5] / slots_iv / max_dci);
        }
    }
}
