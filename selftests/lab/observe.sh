#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# observe: what an operator sees of a running transfer. Tracepoints
# (metaroce:*), per-QP transport state in `rdma res show qp -dd`, and the
# counters of `rdma statistic`, checked against a transfer whose payload is
# verified (ibv_rc_pingpong -c) and one that has to retransmit (netem loss).
#
#        n1 (client)                               n2 (server)
#   +----------------------+                  +----------------------+
#   | mrc0 -> eth0         |   metaroce/UDP   | mrc0 -> eth0         |
#   | ibv_rc_pingpong -c   |<---------------->| ibv_rc_pingpong -c   |
#   | trace: metaroce:*    |  netem loss 10%  | trace: metaroce:*    |
#   +----------------------+  (2nd part, n1's |                      |
#                               SEND packets)
#
# The loss takes n1's SEND packets only, not its ACKs: ibv_rc_pingpong's
# client destroys its QP as soon as the server's last SEND arrived, so the
# loss of its last ACK could not be repaired -- the server would retry into
# a QP that no longer exists and fail RETRY_EXC after the give-up bound
# (protocol.rst "The last acknowledgement before a QP goes away"; with
# loss on n2's egress the client's last SEND has the same race).
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SRV=192.0.2.2
T=/sys/kernel/tracing

pingpong() { lab_pingpong ibv_rc_pingpong "$@"; }	# ITERS SIZE, payload verified

trace_on() {	# NODE: clear the buffer, enable every metaroce event
	lab_run "$1" "mountpoint -q $T || mount -t tracefs tracefs $T
echo 0 >$T/tracing_on; echo >$T/trace; echo 4096 >$T/buffer_size_kb
echo 1 >$T/events/metaroce/enable && echo 1 >$T/tracing_on"
}
trace_off() { lab_run "$1" "echo 0 >$T/tracing_on; cat $T/trace >/tmp/trace.txt"; }
# traced NODE EVENT [AWK-CONDITION]: at least one EVENT line matching
traced() {
	lab_run "$1" "grep -E ' $2: ' /tmp/trace.txt | awk '${3:-1}' | grep -q ."
}
# send_loss NODE PCT: netem loss PCT% of NODE's outgoing metaroce SEND
# packets (BTH opcode 0x01, byte 29 of an IPv4 packet without options);
# everything else passes (prio band 2, no netem).
send_loss() {
	lab_run "$1" "tc qdisc replace dev eth0 root handle 1: prio &&
tc qdisc add dev eth0 parent 1:3 handle 30: netem loss $2% &&
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff \
	match ip dport 19791 0xffff match u8 0x01 0xff at 29 flowid 1:3"
}
# netem_drops NODE: packets the send_loss netem dropped
netem_drops() {
	lab_run "$1" "tc -s qdisc show dev eth0" | awk '/^qdisc netem 30:/ {f = 1} f && /dropped/ {
		sub(/.*dropped /, ""); sub(/,.*/, ""); print; exit}'
}

lab_start
for n in n1 n2; do
	check "$n: metaroce loaded, mrc0 on eth0" lab_load_metaroce $n
	check "$n: metaroce tracepoints registered" \
		lab_run $n "ls /sys/kernel/debug/tracing/events/metaroce/metaroce_tx >/dev/null 2>&1 ||
			    { mount -t tracefs tracefs $T && ls $T/events/metaroce/metaroce_tx; }"
	trace_on $n >/dev/null
done

check "clean: ibv_rc_pingpong -c 200 x 4 KiB (payload verified)" pingpong 200 4096
for n in n1 n2; do trace_off $n >/dev/null; done
check "n1: metaroce_tx events carry PSN, path and source port" \
	traced n1 metaroce_tx '/qp [0-9]+ op 0x[0-9a-f]+ psn [0-9]+ path [0-9]+ ppsn [0-9]+ sport [0-9]+ len [1-9]/'
check "n1: data sprayed over more than one path (distinct sports)" \
	lab_run n1 "grep ' metaroce_tx: ' /tmp/trace.txt | grep -o 'sport [0-9]*' | sort -u | wc -l | awk '\$1 > 1 {ok=1} END {exit !ok}'"
check "n2: metaroce_rx events for what n1 sent" traced n2 metaroce_rx '/psn [0-9]+ path [0-9]+ ppsn [0-9]+ len [1-9]/'
check "n1: metaroce_ack events advance the cumulative PSN" traced n1 metaroce_ack '/acked [1-9]/'

# A longer transfer in the background: look at the QP while it runs.
lab_bg n2 bw ib_write_bw -d mrc0 -x 1 -F -s 65536 -D 20
lab_wait_for n2 'ss -ltn | grep -q :18515' 30 >/dev/null
lab_bg n1 bwc ib_write_bw -d mrc0 -x 1 -F -s 65536 -D 20 $SRV
check "n1: rdma res show qp -dd shows the transport state of the running QP" \
	lab_wait_for n1 "rdma -dd res show qp link mrc0/1 | grep -q 'p0_cwnd'" 60
n1 "rdma -dd res show qp link mrc0/1" | sed 's/^/  | /'
check "ib_write_bw -D 20 completed (client)" lab_wait bwc
check "ib_write_bw -D 20 completed (server)" lab_wait bw

# Loss: retransmits must show up in the trace and in the counters alike.
for n in n1 n2; do trace_on $n >/dev/null; done
r0=$(lab_counter n1 retx_packets)
check "n1: netem loss 10% of the SEND packets on eth0" send_loss n1 10
check "loss 10%: ibv_rc_pingpong -c 100 x 16 KiB (payload verified)" pingpong 100 16384
nd=$(netem_drops n1)
check "loss 10%: netem dropped SEND packets of n1 (${nd:-?})" test "${nd:-0}" -gt 0
lab_netem_clear n1 >/dev/null
for n in n1 n2; do trace_off $n >/dev/null; done
r1=$(lab_counter n1 retx_packets)
ntr=$(lab_run n1 "grep -c ' metaroce_retransmit: ' /tmp/trace.txt")
check "loss 10%: retransmit events traced ($ntr)" test "${ntr:-0}" -gt 0
check "loss 10%: traced retransmits == retx_packets delta ($ntr vs $r0 -> $r1)" \
	test "${ntr:-x}" = "$((${r1:-0} - ${r0:-0}))"
check "loss 10%: retransmitted packets are marked RETX in metaroce_tx" \
	traced n1 metaroce_tx '/ RETX$/'

for n in n1 n2; do
	lab_run $n "echo 0 >$T/events/metaroce/enable" >/dev/null
done
lab_summary
