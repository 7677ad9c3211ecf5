#!/usr/bin/env bash
# Are two builds' outputs byte-identical? Runs the standard set of scenarios with each build's
# `outputs` example (crates/bench/examples/outputs.rs: summary.json without `wall`, every
# time-series table at full precision, every pcap) and compares the folders.
#
#   cargo build --release -p rantcp-bench --example outputs
#   cp target/release/examples/outputs /tmp/outputs-before      # on the commit before
#   scripts/same-outputs.sh /tmp/outputs-before target/release/examples/outputs [/tmp/same-out]
#
# Exit 0 when every run's outputs are identical; otherwise the differing files are listed.
# A run whose outputs are identical is deleted at once (with pcaps the 20 runs take ~2.7 GB;
# kept, a few comparisons filled /tmp); only the differing runs are left under the folder, and
# the folder itself goes when nothing differs.
set -euo pipefail
before=$1 after=$2 work=${3:-/tmp/same-outputs}
rm -rf "$work"; mkdir -p "$work"
LOS="ue.los_duration=1000s ue.nlos_duration=0s"
MB="builtin:mmwave-blockage duration=6s output.pcap=true"
runs=(
  "p2p-bulk|builtin:p2p-bulk duration=10s output.pcap=true"
  "lte-cell4|builtin:lte-cell ues=4 duration=5s output.pcap=true"
  "mmb-off|$MB"
  "mmb-none|$MB functions.proxy.mode=none"
  "mmb-pep|$MB functions.proxy.mode=pep"
  "mmb-mmpep|$MB functions.proxy.mode=mmpep functions.proxy.alpha=1.12"
  "mmb-mmpep-measured|$MB functions.proxy.mode=mmpep"
  "mmb-los-off|$MB $LOS"
  "mmb-los-mmpep|$MB $LOS functions.proxy.mode=mmpep functions.proxy.alpha=1.12"
  "mmb-um-mmpep|$MB rlc.mode=um functions.proxy.mode=mmpep functions.proxy.alpha=1.12"
  "mmb-um-pep|$MB rlc.mode=um functions.proxy.mode=pep seed=7"
  "mmb-smallcache|$MB functions.proxy.mode=mmpep functions.proxy.cache=64KB"
  "lte-cell6-pep|builtin:lte-cell ues=6 duration=4s functions.proxy.mode=pep"
  "lte-cell6-mmpep|builtin:lte-cell ues=6 duration=4s functions.proxy.mode=mmpep output.pcap=true"
  "lte7-ackf|builtin:lte-7cell ues=20 duration=3s functions.ack_filter.mode=hybrid-opt output.pcap=true"
  "urban-mmpep|builtin:mmwave-urban duration=5s functions.proxy.mode=mmpep functions.proxy.alpha=1.12 output.pcap=true"
  "radio-close|builtin:radio-aware duration=6s functions.close_coupled.enabled=true output.pcap=true"
  "radio-loose|builtin:radio-aware duration=6s flow.cc=radio-aware functions.radio_feedback.enabled=true"
  "split-estcp|builtin:split-tcp flow.bytes=5MB radio.fixed_mcs=25 functions.split.mode=es-tcp duration=10s output.pcap=true"
  "lte-m2m|builtin:lte-m2m ues=60 duration=3s output.pcap=true"
)
fail=0
for r in "${runs[@]}"; do
  name=${r%%|*}; args=${r#*|}
  # shellcheck disable=SC2086
  "$before" "$work/before/$name" $args >/dev/null &
  # shellcheck disable=SC2086
  "$after" "$work/after/$name" $args >/dev/null
  wait
  if diff -rq "$work/before/$name" "$work/after/$name" >/dev/null; then
    echo "same  $name ($(find "$work/after/$name" -type f | wc -l) files)"
    rm -rf "${work:?}/before/$name" "${work:?}/after/$name"
  else
    echo "DIFF  $name"; diff -rq "$work/before/$name" "$work/after/$name" || true; fail=1
  fi
done
if [ $fail = 0 ]; then rm -rf "$work"; else echo "differing runs kept under $work"; fi
exit $fail
