#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# wire: see the wire. tcpdump on n1's eth0 while RC traffic runs under netem
# loss 1% on n1; the capture is decoded on the host with the Wireshark
# dissector (scripts/wireshark/metaroce.lua, by tshark) and held against
# the device counters and the metaroce_tx tracepoint of the same window.
#
#        n1 (client)                                 n2 (server)
#   +----------------------------+  metaroce/UDP  +------------------------+
#   | ibv_rc_pingpong -c,        |<-------------->| ibv_rc_pingpong -c,    |
#   | ib_write_bw -n 200         |  qemu stream   | ib_write_bw (server)   |
#   | eth0: netem loss 1%        |                |                        |
#   |   -> tcpdump (after qdisc) |                |                        |
#   | trace: metaroce_tx         |                | trace: metaroce_tx     |
#   +----------------------------+                +------------------------+
#
# tcpdump taps n1's egress after the qdisc (netem drops never reach it) and
# all of n1's ingress, so the capture holds what n1 put on the wire and
# everything n2 sent (nothing is lost on n2 -> n1). Checks:
#  - every packet decodes as metaroce, ICRC good, no header rule broken;
#    WRITE, SEND, ACK (with SACK bits) and RETX packets are there;
#  - n2: its packets in the capture = the growth of its tx_packets, its
#    RETX packets = the growth of its retx_packets, exactly;
#  - n1: captured <= tx_packets growth <= captured + netem drops, and the
#    same for RETX packets vs retx_packets (a retransmission netem dropped
#    was counted but never left; netem drops also count the perftest's TCP);
#  - metaroce_tx: one RETX event per retx_packets increment on each node;
#    every captured data packet (opcode, PSN, path, PPSN, source port,
#    length, RETX) has its event, and every event of n2 its packet.
# The pcap (wire.pcap), its decode (wire.txt), the traces, the counters and
# `rdma -dd res show qp` of the running ib_write_bw stay in the run dir
# (Documentation/debugging.rst walks through one).
# Guest-side and eval'd expressions are single-quoted on purpose:
# shellcheck disable=SC2016
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SRV=192.0.2.2
T=/sys/kernel/tracing
LUA=$LAB_ROOT/scripts/wireshark/metaroce.lua
SUMMARY=$LAB_ROOT/selftests/wire/capture_summary.py

# ctr NODE: "name value" lines of mrc0's counters
ctr() {
	lab_run "$1" 'rdma statistic show link mrc0/1' |
		tr ' ' '\n' | awk 'NF { if (k) { print k, $0; k = "" } else if ($0 ~ /^[a-z_]+$/) k = $0 }'
}

# snap TAG: both nodes' counters and their eth0 root qdisc drops (n1:
# netem; n2: its default qdisc, which should drop nothing)
snap() {
	local n
	for n in n1 n2; do
		ctr $n >"$LAB_RUN/ctr-$1-$n"
		lab_run $n 'tc -s qdisc show dev eth0' |
			awk '/dropped/ { sub(",", "", $7); print $7; exit }' \
			>"$LAB_RUN/drops-$1-$n"
		[ -s "$LAB_RUN/drops-$1-$n" ] || echo 0 >"$LAB_RUN/drops-$1-$n"
	done
}

d() {	# NODE NAME: growth of counter NAME on NODE over the window
	local a b
	a=$(awk -v k="$2" '$1 == k { print $2 }' "$LAB_RUN/ctr-a-$1")
	b=$(awk -v k="$2" '$1 == k { print $2 }' "$LAB_RUN/ctr-b-$1")
	echo $((${b:-0} - ${a:-0}))
}

drops() {	# [NODE]: qdisc drops on NODE (n1) over the window
	local n=${1:-n1}
	echo $(($(cat "$LAB_RUN/drops-b-$n") - $(cat "$LAB_RUN/drops-a-$n")))
}

s() {	# KEY: a figure of the capture summary
	awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print -1 }' \
		"$LAB_RUN/summary.txt"
}

eq() { echo "$1 == $2"; [ "$1" -eq "$2" ]; }
le() { echo "$1 <= $2"; [ "$1" -le "$2" ]; }
between() { echo "$1 <= $2 <= $3"; [ "$1" -le "$2" ] && [ "$2" -le "$3" ]; }

trace_on() {	# NODE: a fresh buffer, metaroce_tx only
	lab_run "$1" "mountpoint -q $T || mount -t tracefs tracefs $T
echo 0 >$T/tracing_on; echo >$T/trace; echo 16384 >$T/buffer_size_kb
echo 1 >$T/events/metaroce/metaroce_tx/enable && echo 1 >$T/tracing_on"
}
trace_off() {	# NODE: the events into the run dir
	lab_run "$1" "echo 0 >$T/tracing_on; cat $T/trace >\$LAB_DIR/trace-$1.txt
echo 0 >$T/events/metaroce/metaroce_tx/enable"
}
trace_complete() {	# NODE: the ring buffer overwrote nothing
	grep -m1 'entries-in-buffer/entries-written' "$LAB_RUN/trace-$1.txt" |
		tee /dev/stderr |
		awk '{ split($3, a, "/"); exit !(a[1] == a[2] && a[1] > 0) }'
}

write_bw() {	# ib_write_bw -n 200 x 64 KiB; the QP state while it runs
	local rc
	lab_bg n2 bw ib_write_bw -d mrc0 -x 1 -F -s 65536 -n 200
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	lab_bg n1 bwc ib_write_bw -d mrc0 -x 1 -F -s 65536 -n 200 $SRV
	# (the GSI QP is always there: wait for the RC QP)
	if lab_wait_for n1 "rdma -dd res show qp link mrc0/1 | grep -q 'type RC.*p0_cwnd'" 60 >/dev/null; then
		n1 'rdma -dd res show qp link mrc0/1 | grep "type RC"' >"$LAB_RUN/res-qp-n1.txt"
		n2 'rdma -dd res show qp link mrc0/1 | grep "type RC"' >"$LAB_RUN/res-qp-n2.txt"
	fi
	lab_wait bwc
	rc=$?
	lab_wait bw >/dev/null || return 1
	return $rc
}

command -v tshark >/dev/null || lab_fatal "tshark is not installed (scripts/setup.sh installs it)"

lab_start
for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
done

# --- capture and trace, then the traffic under loss
lab_bg n1 cap "echo \$\$ >/tmp/tcpdump.pid
exec tcpdump -i eth0 -n -s 0 -B 16384 -U -Z root -w /tmp/wire.pcap udp port 19791 2>/tmp/tcpdump.log"
check "n1: tcpdump listens on eth0" \
	lab_wait_for n1 'grep -q "listening on" /tmp/tcpdump.log' 60
for n in n1 n2; do
	check "$n: metaroce_tx tracepoint on" trace_on $n
done
check "n1: netem loss 1%" lab_netem n1 loss 1%
snap a
check "loss 1%: ibv_rc_pingpong -c 20 x 64 KiB (payload verified)" \
	lab_pingpong ibv_rc_pingpong 20 65536
check "loss 1%: ib_write_bw -n 200 x 64 KiB" write_bw
snap b
check "n1: netem cleared" lab_netem_clear n1
for n in n1 n2; do
	trace_off $n >/dev/null
	check "$n: the trace buffer lost no event" trace_complete $n
done
n1 'kill -INT $(cat /tmp/tcpdump.pid)' >/dev/null
lab_wait cap >/dev/null
n1 'cat /tmp/tcpdump.log; cp /tmp/wire.pcap $LAB_DIR/wire.pcap' >"$LAB_RUN/tcpdump.log"
check "n1: tcpdump dropped nothing" \
	eval "cat '$LAB_RUN/tcpdump.log'; grep -q '^0 packets dropped by kernel' '$LAB_RUN/tcpdump.log'"
check "netem dropped packets (the comparison means something)" \
	eval '[ "$(drops)" -gt 0 ] && echo "drops: $(drops)"'
lab_log "counters n1: $(tr '\n' ' ' <"$LAB_RUN/ctr-b-n1")"
lab_log "counters n2: $(tr '\n' ' ' <"$LAB_RUN/ctr-b-n2")"

# --- the capture, decoded on the host
check "host: tshark decodes the capture with the dissector" \
	eval "python3 '$SUMMARY' '$LAB_RUN/wire.pcap' --lua '$LUA' \
		--node n1=192.0.2.1 --node n2=$SRV \
		--trace n1='$LAB_RUN/trace-n1.txt' --trace n2='$LAB_RUN/trace-n2.txt' \
		>'$LAB_RUN/summary.txt' && cat '$LAB_RUN/summary.txt'"
tshark -n -X lua_script:"$LUA" -r "$LAB_RUN/wire.pcap" >"$LAB_RUN/wire.txt" 2>/dev/null
lab_log "capture: $(tr '\n' ' ' <"$LAB_RUN/summary.txt")"

check "capture: every packet is metaroce ($(s frames) frames)" \
	eval '[ "$(s frames)" -gt 0 ] && eq "$(s metaroce)" "$(s frames)"'
check "capture: every ICRC is good" eq "$(s icrc_good)" "$(s metaroce)"
check "capture: no header rule broken" eq "$(s malformed)" 0
check "capture: WRITE, SEND and ACK packets" \
	eval '[ "$(s op_WRITE)" -gt 0 ] && [ "$(s op_SEND)" -gt 0 ] && [ "$(s op_ACK)" -gt 0 ]'
check "capture: n2's ACKs carry SACK bits (holes seen)" \
	eval '[ "$(s n2_sack_acks)" -gt 0 ] && echo "$(s n2_sack_acks) ACKs with SACK bits"'
check "capture: retransmissions (RETX) from n1: $(s n1_retx)" \
	eval '[ "$(s n1_retx)" -gt 0 ]'

# n2: nothing is dropped between n2 and the capture point (unless n2's own
# qdisc dropped something: counted, and 0 in the runs seen)
check "n2: captured packets + n2 qdisc drops == tx_packets growth" \
	eq $(($(s n2_pkts) + $(drops n2))) "$(d n2 tx_packets)"
check "n2: retx_packets growth == captured RETX (+ n2 qdisc drops)" \
	between "$(s n2_retx)" "$(d n2 retx_packets)" $(($(s n2_retx) + $(drops n2)))
# n1: netem drops before the capture point
check "n1: captured <= tx_packets growth <= captured + netem drops" \
	between "$(s n1_pkts)" "$(d n1 tx_packets)" $(($(s n1_pkts) + $(drops)))
check "n1: captured RETX <= retx_packets growth <= captured RETX + netem drops" \
	between "$(s n1_retx)" "$(d n1 retx_packets)" $(($(s n1_retx) + $(drops)))

# the tracepoint of the same window
for n in n1 n2; do
	check "$n: metaroce_tx RETX events == retx_packets growth" \
		eq "$(s ${n}_trace_retx)" "$(d $n retx_packets)"
	check "$n: every captured data packet has its metaroce_tx event (op, psn, path, ppsn, sport, len, retx)" \
		eq "$(s ${n}_cap_not_traced)" 0
done
check "n2: every metaroce_tx event of n2 is in the capture" \
	le "$(s n2_traced_not_captured)" "$(drops n2)"
check "n1: events not in the capture <= netem drops" \
	le "$(s n1_traced_not_captured)" "$(drops)"
# one transmit queue per QP, one sender at a time (design.rst): packets
# leave in the order metaroce_tx saw them built
for n in n1 n2; do
	check "$n: captured data packets are in metaroce_tx order ($(s ${n}_in_order))" \
		eval 'io=$(s '$n'_in_order); [ "${io%/*}" = "${io#*/}" ] && [ "${io#*/}" -gt 0 ]'
done

check "n1: metaroce.ko unloads" n1 'rdma link del mrc0 && rmmod metaroce'
check "n2: metaroce.ko unloads" n2 'rdma link del mrc0 && rmmod metaroce'
lab_summary
