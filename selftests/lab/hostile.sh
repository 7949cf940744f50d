#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hostile: bad input on the wire must never hurt the kernel. n1 forges
# metaroce packets (selftests/tools/mrc_forge.py) at n2's UDP port 19791
# while a legitimate RC transfer with data verification runs between the
# same nodes.
#
#      n1 (attacker + legit client)             n2 (target)
#   +------------------------------+        +------------------------------+
#   | mrc_forge.py --dst 192.0.2.2 |  UDP   | mrc0: mrc_target serve       |
#   | mrc_target client (13 QPs)   |------->|   13 RC QPs, 1 MiB MR between|
#   | ibv_rc_pingpong -c (client)  | 19791  |   two unregistered guards    |
#   | tcpdump (capture for replay) |        | ibv_rc_pingpong -c (server)  |
#   +------------------------------+        +------------------------------+
#
# Target QPs on n2 (index: what is thrown at it):
#   0  legit WRITE+SEND, captured, replayed 3x (no duplicate placement)
#   1  duplicate / stale / beyond-window WRITEs at known PSNs
#   2  truncations, bad version, unknown opcodes, reserved flags, bad path
#      ids (an ACK's ts_path and path records: since version 3 every BTH
#      path byte is a valid path and epoch), bad ICRC, inconsistent
#      lengths, UD datagrams (all parse drops: the QP must stay RTS)
#   3  WRITE with bogus rkeys        4  WRITE with va wrapping 2^64
#   5  WRITE outside the MR          6  READ_REQ of 2 GiB and friends
#   7  misaligned / out-of-bounds atomics
#   8  SENDs selecting far-away receive WQEs, overflowing messages
#   9  ACK/NAKs for PSNs never sent, ACK with npaths 255
#   10 unsolicited READ_RESP / ATOMIC_RESP
#   11 PROBE flood                  12 seeded random packets
#   13 spoof: WRITEs/SENDs/READ/atomics/ACK from an unprivileged user on
#      n2 itself (plain UDP socket, source 192.0.2.2, through loopback):
#      not the QP's peer, dropped (peer_drops; selftests/lab/peer.sh has
#      the other third parties)
# plus QPNs 0, 1, > 24 bits and nonexistent ones, and junk to QP1 (GSI).
# Every hostile WRITE payload is 0xEE: the MR must stay all-zero and the
# guards intact. Device counters (rdma statistic) are checked when the
# module provides them (malformed_drops, integrity_drops, noqp_drops,
# duplicates, out_of_window, peer_drops), else skipped. The forger is
# paced (1000 packets/s): the point is bad input, not a flood.
# Knobs: HOSTILE_SEED (1), HOSTILE_RANDOM (3000 packets), HOSTILE_CONTROL=1
# (sends nothing hostile, sleeps instead: tells an attack effect on the
# legit pingpong from one of a loaded host; the checks that need the
# attack then fail).
# lab: long (see scripts/test.sh)
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SEED=${HOSTILE_SEED:-1}
NRAND=${HOSTILE_RANDOM:-3000}
SRV=192.0.2.2
NQP=14

mkdir -p "$ROOT/build/tools" "$ROOT/build/hostile"
gcc -Wall -Wextra -Wno-missing-field-initializers -O2 \
	-o "$ROOT/build/tools/mrc_target" "$ROOT/selftests/tools/mrc_target.c" \
	-libverbs || lab_fatal "cannot build mrc_target.c"
# a private copy: other builds may rewrite ./metaroce.ko meanwhile
if [ -z "${LAB_MODULE_FIXED:-}" ]; then
	cp "$LAB_MODULE" "$ROOT/build/hostile/metaroce.ko" ||
		lab_fatal "no $LAB_MODULE"
	LAB_MODULE=$ROOT/build/hostile/metaroce.ko
fi

TARGET=$ROOT/build/tools/mrc_target
FORGE="/usr/bin/python3 $ROOT/selftests/tools/mrc_forge.py --dst $SRV"
FINFO="--info /tmp/lab/srv.info --peer-info /tmp/lab/cli.info"

targets_up() {
	# they live for the whole scenario: lift the 300 s default limit
	LAB_CMD_TIMEOUT=1800 lab_bg n2 srv "$TARGET" serve /tmp/lab -q $NQP
	LAB_CMD_TIMEOUT=1800 lab_bg n1 cli "$TARGET" client /tmp/lab -q $NQP
	for _ in $(seq 600); do
		[ -e "$LAB_RUN/srv.ready" ] && [ -e "$LAB_RUN/cli.ready" ] &&
			return 0
		sleep 0.1
	done
	echo "targets not ready"
	return 1
}

forge() {	# CASE ARGS...: run the forger on n1
	if [ -n "${HOSTILE_CONTROL:-}" ]; then
		# control run: same timeline, legit traffic only
		n1 'sleep 15'
		return
	fi
	# shellcheck disable=SC2086
	LAB_CMD_TIMEOUT=240 n1 "$FORGE $*"
}

capture_start() {
	lab_bg n1 td 'echo $$ >/tmp/td.pid; exec tcpdump -U -n -i eth0 -w /tmp/lab/cap.pcap udp dst port 19791 and dst host '$SRV
	lab_wait_for n1 'test -s /tmp/lab/cap.pcap' 30
}

capture_stop() {
	n1 'kill -INT $(cat /tmp/td.pid)'
	lab_wait td
	n1 "tcpdump -n -r /tmp/lab/cap.pcap 2>/dev/null | wc -l | tee /dev/stderr | grep -qv '^0$'"
}

# rdma statistic of n2's mrc0 port 1 -> "name value" lines
stats() {
	lab_run n2 'rdma statistic show link mrc0/1' |
		tr ' ' '\n' | awk 'NR > 2 && prev != "" && $0 ~ /^[0-9]+$/ { print prev, $0 } { prev = $0 }'
}

ctr() {	# FILE NAME -> value or nothing
	awk -v n="$2" '$1 == n { print $2 }' "$1"
}

counter_rose() {	# NAME: check it rose between stats.before and stats.after
	local b a
	b=$(ctr "$LAB_RUN/stats.before" "$1")
	a=$(ctr "$LAB_RUN/stats.after" "$1")
	if [ -z "$b" ] || [ -z "$a" ]; then
		echo "skip  n2: counter $1 rose (no such counter in this build; see $LAB_RUN/stats.after)"
		return 0
	fi
	check "n2: counter $1 rose ($b -> $a)" test "$a" -gt "$b"
}

# The legit traffic during the attack: verified pingpongs (200 x 4 KiB)
# back to back until /tmp/lab/pp.stop appears. The client fails on the
# first run that fails for any reason but "server not listening yet", a
# run that hangs included: each client run gets LEGIT_RUN_S (a run takes
# well under a second on an idle host). The loops' own limit is only a
# backstop: the attack between start and stop lasts as long as the host's
# load makes it (23 min on a host at load 16-18, where the 20-min limit
# it had killed the client loop, rc 124, and its output with it).
LEGIT_RUN_S=${LEGIT_RUN_S:-120}
legit_loop_start() {
	rm -f "$LAB_RUN/pp.stop"
	LAB_CMD_TIMEOUT=7200 lab_bg n2 pps 'n=0
while [ ! -e /tmp/lab/pp.stop ]; do
	ibv_rc_pingpong -d mrc0 -g 1 -n 200 -s 4096 -c >/tmp/pps.out 2>&1 &
	echo $! >/tmp/pps.pid
	if ! wait $!; then
		[ -e /tmp/lab/pp.stop ] && break
		cat /tmp/pps.out; echo "server run $((n + 1)) failed"; exit 1
	fi
	n=$((n + 1))
done
echo "server: $n runs"'
	LAB_CMD_TIMEOUT=7200 lab_bg n1 ppc 'n=0
while [ ! -e /tmp/lab/pp.stop ]; do
	out=$(timeout '$LEGIT_RUN_S' ibv_rc_pingpong -d mrc0 -g 1 -n 200 -s 4096 -c '$SRV' 2>&1)
	rc=$?
	if [ $rc = 0 ]; then n=$((n + 1)); continue; fi
	if echo "$out" | grep -q "Couldn.t connect to"; then sleep 0.3; continue; fi
	echo "$out"; echo "client run $((n + 1)) failed (rc $rc)"; exit 1
done
echo "client: $n verified runs of 200 x 4 KiB"
[ $n -ge 2 ]'
	lab_wait_for n2 'ss -ltn | grep -q :18515' 120
}

legit_loop_stop() {
	local rc
	touch "$LAB_RUN/pp.stop"
	lab_wait ppc
	rc=$?
	sleep 1
	n2 'kill $(cat /tmp/pps.pid) 2>/dev/null; true'
	lab_wait pps || return 1
	return $rc
}

legit_pp_start() {
	lab_bg n2 pp ibv_rc_pingpong -d mrc0 -g 1 -n "$1" -s 4096 -c
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	lab_bg n1 ppc1 ibv_rc_pingpong -d mrc0 -g 1 -n "$1" -s 4096 -c $SRV
}

legit_pp_wait() {
	local rc
	lab_wait ppc1
	rc=$?
	lab_wait pp || return 1
	return $rc
}

pingpong() {	# N: a whole verified pingpong
	legit_pp_start "$1" && legit_pp_wait
}

# QPNs that exist on n2 (never aimed at by the "nonexistent QPN" cases)
n2_qpns() {
	n2 'rdma res show qp' | sed -n 's/.*lqpn \([0-9]*\).*/\1/p' |
		sort -un | paste -sd, -
}

lab_start

for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
done
check "n2/n1: mrc_target up, $NQP RC QPs each, connected" targets_up
stats >"$LAB_RUN/stats.before"

# ---- replay of a captured valid stream to the live QP 0
check "n1: tcpdump capturing n1 -> n2:19791" capture_start
check "qp0: legit WRITE 64 KiB + SEND of 0x11" lab_tcmd cli 'xfer 0 0x11 65536'
check "qp0: WRITE placed" lab_tcmd srv 'check 0 65536 0x11'
check "qp0: exactly 1 receive completion" lab_tcmd srv 'expect_recv 0 1'
check "n1: capture stopped, packets captured" capture_stop
check "n2: MR cleared to 0x00" lab_tcmd srv 'fill 0'
check "n1: replay the capture 3x to live qp0" \
	forge replay --pcap /tmp/lab/cap.pcap --seed "$SEED" --count 3
sleep 2
check "replay: no WRITE placed again (MR all 0x00)" \
	lab_tcmd srv 'check 0 1048576 0'
check "replay: no duplicate receive completion (still 1)" \
	lab_tcmd srv 'expect_recv 0 1'
check "replay: qp0 still RTS" lab_tcmd srv 'expect_state 0 RTS'
check "qp0: legit WRITE+SEND of 0x22 after the replay" \
	lab_tcmd cli 'xfer 0 0x22 4096'
check "qp0: placed (0x22) and 2nd receive completion" \
	eval "lab_tcmd srv 'check 0 4096 0x22' && lab_tcmd srv 'expect_recv 0 2'"

# ---- duplicates at known PSNs on QP 1
check "n1: forge dup/stale/out-of-window WRITEs to qp1" forge dup $FINFO --qp 1
sleep 1
check "dup: new WRITE placed once (0x11, not 0x22)" \
	lab_tcmd srv 'check 0x10000 256 0x11'
check "dup: stale and beyond-window WRITEs not placed" \
	lab_tcmd srv 'check 0x20000 0x10000 0'
check "dup: next PSN placed (0x55): qp1 still works" \
	lab_tcmd srv 'check 0x30000 256 0x55'
check "dup: qp1 still RTS" lab_tcmd srv 'expect_state 1 RTS'
check "n2: MR cleared to 0x00" lab_tcmd srv 'fill 0'

# ---- the attack, with a legit verified pingpong running meanwhile
check "legit: ibv_rc_pingpong -c loop started" legit_loop_start
AVOID=$(n2_qpns)
lab_log "n2 QPNs: $AVOID"
check "n1: truncated packets, every length (qp2)" forge trunc $FINFO --qp 2
check "n1: bad version (qp2)" forge version $FINFO --qp 2
check "n1: unknown opcodes x 5 lengths (qp2)" forge opcode $FINFO --qp 2
check "n1: reserved / inconsistent flags (qp2)" forge flags $FINFO --qp 2
check "n1: bad path ids (qp2)" forge path $FINFO --qp 2
check "n1: valid headers, bad ICRC (qp2)" forge icrc $FINFO --qp 2
check "n1: valid ICRC, absurd lengths (qp2)" forge lengths $FINFO --qp 2
check "n1: UD datagrams to an RC QP (qp2)" forge ud $FINFO --qp 2
check "n1: QPNs 0, 1, >24 bits, nonexistent" \
	forge qpn $FINFO --qp 2 --seed "$SEED" --avoid "$AVOID"
check "n1: WRITE with bogus rkeys (qp3)" forge write_rkey $FINFO --qp 3
check "n1: WRITE with va wrapping 2^64 (qp4)" forge write_wrap $FINFO --qp 4
check "n1: WRITE outside the MR (qp5)" forge write_bounds $FINFO --qp 5
check "n1: READ_REQ of 2 GiB (qp6)" forge read_2g $FINFO --qp 6
check "n1: bad atomics (qp7)" forge atomic $FINFO --qp 7
check "n1: SENDs to far/overflowing receive WQEs (qp8)" \
	forge send_junk $FINFO --qp 8
check "n1: ACK/NAK with SACK beyond anything sent (qp9)" \
	forge ack $FINFO --qp 9 --seed "$SEED"
check "n1: ACK with npaths 255 (qp9)" forge ack_npaths255 $FINFO --qp 9
check "n1: unsolicited READ_RESP/ATOMIC_RESP (qp10)" \
	forge unsolicited $FINFO --qp 10
check "n1: PROBE flood, 2000 (qp11)" forge probe $FINFO --qp 11 --count 2000
check "n1: junk datagrams to QP1 (GSI, ib_mad)" \
	forge gsi $FINFO --seed "$SEED" --count 300
check "n1: $NRAND seeded random packets (seed $SEED; qp12 + nonexistent)" \
	forge random $FINFO --qp 12 --seed "$SEED" --count "$NRAND" \
	--avoid "$AVOID"
if [ -z "${HOSTILE_CONTROL:-}" ]; then
	check "nobody@n2 (loopback, not the peer): spoof at qp13" \
		n2 "setpriv --reuid=65534 --regid=65534 --clear-groups $FORGE spoof $FINFO --qp 13"
fi
check "legit: every pingpong during the attack succeeded (data verified)" \
	legit_loop_stop
sleep 2
stats >"$LAB_RUN/stats.after"

# ---- aftermath
check "n2: node up" n2 true
check "n2: no hostile WRITE placed (MR all 0x00), guards intact" \
	lab_tcmd srv 'check 0 1048576 0'
check "n2: QP states, guards (state)" lab_tcmd srv state
check "qp2: parse-level junk left it RTS" lab_tcmd srv 'expect_state 2 RTS'
check "qp9: bogus ACKs left it RTS" lab_tcmd srv 'expect_state 9 RTS'
check "qp11: PROBE flood left it RTS" lab_tcmd srv 'expect_state 11 RTS'
check "qp2: no receive completion from junk" lab_tcmd srv 'expect_recv 2 0'
check "qp8: no successful receive from junk SENDs" lab_tcmd srv 'expect_recv 8 0'
check "qp13: no receive from the spoofed SENDs, still RTS" \
	eval "lab_tcmd srv 'expect_recv 13 0' && lab_tcmd srv 'expect_state 13 RTS'"
check "n1: client QPs' state after all the NAKs (state)" lab_tcmd cli state
check "n2: rx_packets counted" eval \
	"[ \"\$(ctr $LAB_RUN/stats.after rx_packets)\" -gt \"\$(ctr $LAB_RUN/stats.before rx_packets)\" ]"
counter_rose malformed_drops
counter_rose integrity_drops
counter_rose noqp_drops
counter_rose duplicates
counter_rose out_of_window
counter_rose peer_drops
check "qp13: legit WRITE+SEND after the spoof (its PSNs untouched)" \
	eval "lab_tcmd cli 'xfer 13 0x34 8192' && lab_tcmd srv 'check 0 8192 0x34'"
check "qp0: legit WRITE+SEND still works after the attack" \
	eval "lab_tcmd cli 'xfer 0 0x33 8192' && lab_tcmd srv 'check 0 8192 0x33'"
check "device works: fresh pingpong x50 (data verified)" pingpong 50
check "mrc_target quit (n2)" eval "lab_tcmd srv quit && lab_wait srv >/dev/null"
check "mrc_target quit (n1)" eval "lab_tcmd cli quit && lab_wait cli >/dev/null"
check "n2: no QP/MR left" n2 '! rdma res show qp | grep -v "type GSI" | grep -q lqpn && ! rdma res show mr | grep -q mrn'
check "n1: metaroce.ko unloads" n1 'rdma link del mrc0 && rmmod metaroce'
check "n2: metaroce.ko unloads" n2 'rdma link del mrc0 && rmmod metaroce'

lab_summary
