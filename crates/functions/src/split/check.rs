//! The end-to-end semantics check (issue 15, dissertation §5.1 and Table 6 "Maintain
//! End-To-End Protocol Semantics"): after a run — typically one whose split host failed
//! mid-transfer (`fail_at`) — compare what the far host's application was told is delivered
//! with what the mobile host's application received.
//!
//! * I-TCP keeps no semantics: the far host may have been told about bytes the mobile host
//!   never got (a positive gap is the expected finding when the host dies holding data).
//! * ES-TCP keeps them at session level: the far host's TCP must never acknowledge the whole
//!   transfer unless the mobile host has every byte.
//! * AS-TCP keeps them at byte level: the far host must never free (be told delivered) a byte
//!   the mobile host has not acknowledged; its freed edge is the MH ack it received.

use super::SplitMode;
use serde::Serialize;

/// What one connection's two ends know at the end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    /// Bytes of the transfer.
    pub file_bytes: u64,
    /// Data bytes the far host's TCP had acknowledged (what an I-TCP / ES-TCP far host frees).
    pub fh_acked: u64,
    /// AS-TCP: data bytes the far host freed on MH acks (None without the option).
    pub fh_freed_mh: Option<u64>,
    /// In-order data bytes the mobile host's application received.
    pub mh_received: u64,
}

/// The check's outcome for one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SemanticsReport {
    /// Bytes the far host's application was told are delivered.
    pub fh_told_delivered: u64,
    pub mh_received: u64,
    /// `fh_told_delivered − mh_received` (positive: told about bytes the MH lacks).
    pub gap: i64,
    /// The far host believes the whole transfer delivered.
    pub fh_session_complete: bool,
    /// The mode's guarantee held ("holds"), or not ("violated"); I-TCP has none ("none").
    pub verdict: &'static str,
}

/// Check `e` against the guarantee of `mode` (AS-TCP that fell back to ES-TCP, i.e. without
/// `fh_freed_mh`, is checked as ES-TCP).
pub fn check(mode: SplitMode, e: Ends) -> SemanticsReport {
    let told = match (mode, e.fh_freed_mh) {
        (SplitMode::AsTcp, Some(f)) => f,
        _ => e.fh_acked,
    };
    let complete = e.fh_acked >= e.file_bytes;
    let verdict = match (mode, e.fh_freed_mh) {
        (SplitMode::Off, _) | (SplitMode::ITcp, _) => "none",
        (SplitMode::AsTcp, Some(f)) => ok(f <= e.mh_received),
        _ => ok(!complete || e.mh_received >= e.file_bytes),
    };
    SemanticsReport {
        fh_told_delivered: told,
        mh_received: e.mh_received,
        gap: told as i64 - e.mh_received as i64,
        fh_session_complete: complete,
        verdict,
    }
}

fn ok(b: bool) -> &'static str {
    if b {
        "holds"
    } else {
        "violated"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(acked: u64, freed: Option<u64>, got: u64) -> Ends {
        Ends {
            file_bytes: 1000,
            fh_acked: acked,
            fh_freed_mh: freed,
            mh_received: got,
        }
    }

    #[test]
    fn test_verdicts() {
        let r = check(SplitMode::ITcp, ends(900, None, 400));
        assert_eq!(
            (r.gap, r.verdict, r.fh_session_complete),
            (500, "none", false)
        );
        // ES-TCP: a partial acknowledgement beyond the MH is allowed, a complete one is not.
        assert_eq!(
            check(SplitMode::EsTcp, ends(998, None, 500)).verdict,
            "holds"
        );
        assert_eq!(
            check(SplitMode::EsTcp, ends(1000, None, 999)).verdict,
            "violated"
        );
        assert_eq!(
            check(SplitMode::EsTcp, ends(1000, None, 1000)).verdict,
            "holds"
        );
        // AS-TCP: the freed edge, not the TCP acknowledgement, is what counts.
        let r = check(SplitMode::AsTcp, ends(1000, Some(400), 400));
        assert_eq!((r.fh_told_delivered, r.gap, r.verdict), (400, 0, "holds"));
        assert_eq!(
            check(SplitMode::AsTcp, ends(1000, Some(401), 400)).verdict,
            "violated"
        );
        // Fallen back to ES-TCP.
        assert_eq!(
            check(SplitMode::AsTcp, ends(1000, None, 999)).verdict,
            "violated"
        );
    }
}
