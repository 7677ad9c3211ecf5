//! pcap writer (to be completed by the wire helper).
