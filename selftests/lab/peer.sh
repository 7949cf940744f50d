#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# peer: who may talk to a QP (Documentation/protocol.rst, "Peer
# validation"). Live RC QPs on n2 -- user QPs of mrc_target whose QPNs,
# PSNs and rkey the test knows, and the kernel QPs of nvmet-rdma -- are
# shot at with forged packets (selftests/tools/mrc_forge.py spoof) by
# third parties: an unprivileged user on n2 itself (a plain UDP socket,
# through loopback; and with IP(V6)_FREEBIND claiming n1's address), a
# network namespace bridged onto n2's segment with its own addresses, and
# a routed namespace forging n1's address with a raw socket. Nothing may
# be placed (the MR stays all 0x00, no receive completion, the QPs stay
# RTS and keep working, the NVMe namespace keeps its data) and the drops
# show in the peer_drops counter and the metaroce_rx_drop "peer" trace.
# Also: QP access flags are enforced (REM_ACCESS), an RTR QP does not
# adopt its PSN space from an ACK it did not ask for, and QPNs and rkeys
# are not handed out in sequence.
#
#            n1 (the peer)                          n2 (the target)
#   +--------------------------+        +------------------------------------+
#   | mrc_target client        |        | br0 192.0.2.2 fd00:6d72::2         |
#   |  8 RC QPs (IPv4 GIDs)    |        |  |-- eth0 (port)                   |
#   |  2 RC QPs (IPv6 GIDs)    |  eth0  |  |-- vevil -- netns evil           |
#   | nvme-rdma host           |<------>|  |     192.0.2.66 fd00:6d72::66    |
#   | mrc0 on eth0 192.0.2.1   |        | mrc0 on br0: mrc_target serve,     |
#   +--------------------------+        |   nvmet-rdma (kernel QPs)          |
#                                       | vevil2 10.99.0.1 -- netns evil2    |
#                                       |   10.99.0.2, routed (raw spoofer)  |
#                                       | user nobody: mrc_forge.py          |
#                                       +------------------------------------+
#
# Server QPs (IPv4): 0 spoofed by nobody@n2, 1 by nobody@evil, 2 by evil2
# (raw, n1's address) and nobody@n2 (FREEBIND, n1's address); 3/4/7 lose
# REMOTE_WRITE / READ / ATOMIC; 5 and 6 are held in RTR and get bogus ACKs
# (from evil and from n1's own address) before a READ. IPv6 QP 0 is
# spoofed by nobody@n2 with IPV6_FREEBIND as fd00:6d72::1 (the peer), QP 1
# by nobody@evil.
# Knob: PEER_PARTS (default "spoof access anchor kernel") runs only the
# named parts (the setup, the QPN/rkey check and the counters always run).
# On the debug kernel nvme_core loads with multipath=N (LAB_NVME_CORE_OPTS,
# scripts/lab/lab.sh says why: a lockdep report in nvme_core's multipath
# head removal at `nvme disconnect`, not ours).
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

# PEER_SCALE multiplies the forger's time limit (120 s) and the target
# processes' lifetime (1800 s): 1 on the stock kernel, 4 on the debug
# kernel, where one run of mrc_forge.py (python under KASAN + TCG) took
# 129-153 s (stop 23: four spoofs and both ACK-anchor runs hit the 120 s
# limit, and the whole run outlasted 1800 s).
PEER_SCALE=${PEER_SCALE:-$LAB_SCALE}

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRV=192.0.2.2
SRV6=fd00:6d72::2
NQN=nqn.2014-08.org.metaroce:peer
MIB=$((1024 * 1024))

mkdir -p "$ROOT/build/tools" "$ROOT/build/peer"
gcc -Wall -Wextra -Wno-missing-field-initializers -O2 \
	-o "$ROOT/build/tools/mrc_target" "$ROOT/selftests/tools/mrc_target.c" \
	-libverbs || lab_fatal "cannot build mrc_target.c"
# a private copy: other builds may rewrite ./metaroce.ko meanwhile
if [ -z "${LAB_MODULE_FIXED:-}" ]; then
	cp "$LAB_MODULE" "$ROOT/build/peer/metaroce.ko" ||
		lab_fatal "no $LAB_MODULE"
	LAB_MODULE=$ROOT/build/peer/metaroce.ko
fi

TARGET=$ROOT/build/tools/mrc_target
PY=/usr/bin/python3
FORGE="$PY $ROOT/selftests/tools/mrc_forge.py"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
V4INFO="--info /tmp/lab/srv.info --peer-info /tmp/lab/cli.info"
V6INFO="--info /tmp/lab/v6/srv.info --peer-info /tmp/lab/v6/cli.info"
EXPECT=0	# packets that must show up in n2's peer_drops
PARTS=" ${PEER_PARTS:-spoof access anchor kernel} "
part() { [[ $PARTS == *" $1 "* ]]; }

# n2: eth0 becomes a port of br0 (which takes its addresses and carries
# mrc0), netns evil sits on the same bridge with its own addresses, netns
# evil2 is routed through n2 from another subnet.
n2_net() {
	n2 "set -e
ip link add br0 type bridge
ip link set br0 address \$(cat /sys/class/net/eth0/address)
ip -4 addr flush dev eth0
ip -6 addr flush dev eth0 scope global
ip link set eth0 master br0
ip link set br0 up
ip addr add $SRV/24 dev br0
ip -6 addr add $SRV6/64 dev br0 nodad
ip netns add evil
ip link add vevil type veth peer name eth0 netns evil
ip link set vevil master br0 up
ip -n evil link set lo up
ip -n evil link set eth0 up
ip -n evil addr add 192.0.2.66/24 dev eth0
ip -n evil -6 addr add fd00:6d72::66/64 dev eth0 nodad
ip netns add evil2
ip link add vevil2 type veth peer name eth0 netns evil2
ip addr add 10.99.0.1/24 dev vevil2
ip link set vevil2 up
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.vevil2.rp_filter=0
ip -n evil2 link set lo up
ip -n evil2 link set eth0 up
ip -n evil2 addr add 10.99.0.2/24 dev eth0
ip -n evil2 route add default via 10.99.0.1
busybox ping -c 1 -W 5 192.0.2.1 >/dev/null
ip netns exec evil busybox ping -c 1 -W 5 $SRV >/dev/null
ip netns exec evil2 busybox ping -c 1 -W 5 $SRV >/dev/null
ip -br addr"
}

# gidx NODE ADDR: index of ADDR's RoCE v2 GID on the node's mrc0
gidx() { lab_run "$1" "$PY /tmp/lab/gidx.py $2"; }

targets_up() {
	local g1 g2 g16 g26
	g1=$(gidx n1 192.0.2.1) && g2=$(gidx n2 $SRV) &&
		g16=$(gidx n1 fd00:6d72::1) && g26=$(gidx n2 $SRV6) || return 1
	echo "GID indices: n1 $g1/$g16, n2 $g2/$g26"
	mkdir -p "$LAB_RUN/v6"
	# they live for the whole scenario: lift the 300 s default limit
	LAB_CMD_TIMEOUT=$((1800 * PEER_SCALE)) lab_bg n2 srv "$TARGET" serve /tmp/lab -q 8 \
		-g "$g2" -H 0x60
	LAB_CMD_TIMEOUT=$((1800 * PEER_SCALE)) lab_bg n1 cli "$TARGET" client /tmp/lab -q 8 \
		-g "$g1"
	LAB_CMD_TIMEOUT=$((1800 * PEER_SCALE)) lab_bg n2 srv6 "$TARGET" serve /tmp/lab/v6 -q 2 \
		-g "$g26"
	LAB_CMD_TIMEOUT=$((1800 * PEER_SCALE)) lab_bg n1 cli6 "$TARGET" client /tmp/lab/v6 -q 2 \
		-g "$g16"
	for _ in $(seq 600); do
		[ -e "$LAB_RUN/srv.ready" ] && [ -e "$LAB_RUN/cli.ready" ] &&
			[ -e "$LAB_RUN/v6/srv.ready" ] &&
			[ -e "$LAB_RUN/v6/cli.ready" ] && return 0
		sleep 0.1
	done
	echo "targets not ready"
	return 1
}

# rdma statistic of n2's mrc0 port 1 -> "name value" lines
stats() {
	lab_run n2 'rdma statistic show link mrc0/1' |
		tr ' ' '\n' | awk 'NR > 2 && prev != "" && $0 ~ /^[0-9]+$/ { print prev, $0 } { prev = $0 }'
}

ctr() {	# FILE NAME -> value or nothing
	awk -v n="$2" '$1 == n { print $2 }' "$1"
}

# spoof COUNTED NODE PREFIX FORGE-ARGS...: run the forger on NODE behind
# PREFIX (netns, setpriv); COUNTED=1 adds what it sent to EXPECT.
spoof() {
	local counted=$1 node=$2 prefix=$3 out rc n
	shift 3
	out=$(LAB_CMD_TIMEOUT=$((120 * PEER_SCALE)) lab_run "$node" "$prefix $FORGE $*")
	rc=$?
	echo "$out"
	n=$(sed -n 's/^[a-z_]*: \([0-9]*\) packets.*/\1/p' <<<"$out" | tail -n 1)
	[ "$counted" = 1 ] && EXPECT=$((EXPECT + ${n:-0}))
	[ $rc = 0 ] && [ -n "$n" ]
}

untouched() {	# ROLE QP...: MR all 0x00, guards intact, no recv, RTS
	local role=$1 q
	shift
	lab_tcmd "$role" 'check 0 1048576 0' || return 1
	for q in "$@"; do
		lab_tcmd "$role" "expect_recv $q 0" &&
			lab_tcmd "$role" "expect_state $q RTS" || return 1
	done
}

xfer_ok() {	# PAIR QP BYTE: legit WRITE + SEND on QP, placed
	local p=${1%srv} q=$2 b=$3
	lab_tcmd "${p}cli" "xfer $q $b 8192" && lab_tcmd "${p}srv" "check 0 8192 $b" &&
		lab_tcmd "${p}srv" "expect_recv $q 1"
}

# keys_spread: QPNs and MR key indices of n2 are neither consecutive nor
# bunched (they were handed out in sequence: 2, 3, 4...; 1, 2, 3...)
keys_spread() {
	local qpns keys
	qpns=$(n2 'rdma res show qp link mrc0/1' | grep -v 'type GSI' |
		sed -n 's/.*lqpn \([0-9]*\).*/\1/p')
	keys=$(n2 'rdma res show mr' | sed -n 's/.*rkey \(0x[0-9a-f]*\).*/\1/p')
	echo "n2 QPNs: $(tr '\n' ' ' <<<"$qpns")"
	echo "n2 rkeys: $(tr '\n' ' ' <<<"$keys")"
	$PY - "$qpns" "$keys" <<'EOF'
import sys
q = sorted(int(x) for x in sys.argv[1].split())
k = [int(x, 16) for x in sys.argv[2].split()]
idx = sorted(x >> 8 for x in k)
var = [x & 0xFF for x in k]
bad = []
if len(q) < 8 or len(idx) < 6:
    bad.append("too few QPs/MRs to judge")
for name, v in (("QPN", q), ("key index", idx)):
    d = [b - a for a, b in zip(v, v[1:])]
    if min(d, default=2) < 2 or v[-1] - v[0] < 1 << 16:
        bad.append("%ss in sequence or bunched: %s" % (name, v))
if len(set(var)) < len(var) // 2 or \
   all((b - a) & 0xFF == 1 for a, b in zip(var, var[1:])):
    bad.append("key variants in sequence: %s" % var)
print("\n".join(bad) or "spread")
sys.exit(1 if bad else 0)
EOF
}

NSDEV="for c in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
	grep -qx $NQN \$c/subsysnqn 2>/dev/null || continue
	for n in \$c/nvme*n*; do [ -b /dev/\${n##*/} ] && d=/dev/\${n##*/}; done
done; [ -n \"\$d\" ]"
connect() {
	lab_nvme_host n1 && n1 "nvme connect -t rdma -a $SRV -s 4420 -n $NQN" &&
		lab_wait_for n1 "$NSDEV" 30
}
nvme_io() {	# OFF: 128 KiB of fresh random data written and read back
	n1 "$NSDEV; set -e
head -c 131072 /dev/urandom >/tmp/w
dd if=/tmp/w of=\$d bs=128K seek=$1 oflag=direct,seek_bytes conv=notrunc status=none
dd if=\$d of=/tmp/r bs=128K count=1 skip=$1 iflag=direct,skip_bytes status=none
cmp /tmp/w /tmp/r
cp /tmp/w /tmp/lab/nvme.$1"
}
target_has() {	# OFF: n2's /dev/ram0 holds what nvme_io OFF wrote
	n2 "dd if=/dev/ram0 bs=128K count=1 skip=$1 iflag=direct,skip_bytes status=none | cmp - /tmp/lab/nvme.$1"
}
# kqps [QPN]: "QPN CUM" of n2's kernel (no pid) RC QPs in RTS (or of QPN),
# CUM being the PSN it expects next (the driver's rq_psn_cum)
kqps() {
	lab_run n2 'rdma -j -dd res show qp link mrc0/1' | $PY -c '
import json, sys
for q in json.load(sys.stdin):
    if q.get("type") == "RC" and "pid" not in q and q.get("state") == "RTS" \
       and (len(sys.argv) < 2 or str(q["lqpn"]) == sys.argv[1]):
        print(q["lqpn"], q["drv_rq_psn_cum"])' "$@"
}
# kspoof PREFIX QPN: spoof at kernel QP QPN at the PSN it expects now
kspoof() {
	local psn
	psn=$(kqps "$2" | cut -d' ' -f2)
	echo "QP $2 expects PSN $psn"
	[ -n "$psn" ] && spoof 1 n2 "$1" spoof --dst $SRV --qpn "$2" --psn "$psn"
}

lab_start
cat >"$LAB_RUN/gidx.py" <<'EOF'
import glob, ipaddress, sys, time
a = ipaddress.ip_address(sys.argv[1])
if a.version == 4:
    a = ipaddress.IPv6Address("::ffff:" + str(a))
base = "/sys/class/infiniband/mrc0/ports/1/"
for _ in range(100):  # the GID table fills in the background
    for f in glob.glob(base + "gids/*"):
        i = f.rsplit("/", 1)[1]
        try:
            if open(f).read().strip() != a.exploded:
                continue
            if "v2" not in open(base + "gid_attrs/types/" + i).read():
                continue
        except OSError:
            continue
        print(i)
        sys.exit(0)
    time.sleep(0.2)
sys.exit("no GID for %s" % a)
EOF

check "n2: eth0 bridged into br0; netns evil on br0, evil2 routed" n2_net
check "n1: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce n1
check "n2: metaroce.ko loads, mrc0 on br0" lab_load_metaroce n2 mrc0 br0
check "n2/n1: mrc_target up (8 + 2 RC QPs, IPv4 and IPv6 GIDs)" targets_up ||
	lab_fatal "mrc_target not up"
check "n2: QPNs and rkeys are not handed out in sequence" keys_spread
stats >"$LAB_RUN/stats.before"
check "n2: tracing metaroce_rx_drop" n2 'T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs tracefs $T
echo 0 >$T/tracing_on; echo >$T/trace; echo 1 >$T/events/metaroce/metaroce_rx_drop/enable
echo 1 >$T/tracing_on'

# ---- forged packets at live user QPs, from everyone but the peer
if part spoof; then
	check "nobody@n2 (loopback, 192.0.2.2): spoof at qp0" \
		spoof 1 n2 "$NOBODY" spoof --dst $SRV $V4INFO --qp 0
	check "nobody@evil (bridged, 192.0.2.66): spoof at qp1" \
		spoof 1 n2 "ip netns exec evil $NOBODY" spoof --dst $SRV $V4INFO --qp 1
	check "root@evil2 (routed, raw, source 192.0.2.1 = the peer): spoof at qp2" \
		spoof 0 n2 "ip netns exec evil2" spoof --dst $SRV $V4INFO --qp 2 \
		--raw-src 192.0.2.1
	check "nobody@n2 with IP_FREEBIND as 192.0.2.1 (the peer): spoof at qp2" \
		spoof 0 n2 "$NOBODY" spoof --dst $SRV $V4INFO --qp 2 \
		--bind 192.0.2.1 --freebind
	check "nobody@n2 with IPV6_FREEBIND as fd00:6d72::1 (the peer): spoof at v6 qp0" \
		spoof 1 n2 "$NOBODY" spoof --dst $SRV6 $V6INFO --qp 0 \
		--bind fd00:6d72::1 --freebind
	check "nobody@evil (fd00:6d72::66): spoof at v6 qp1" \
		spoof 1 n2 "ip netns exec evil $NOBODY" spoof --dst $SRV6 $V6INFO --qp 1
	sleep 2
	check "n2: nothing placed in the MR, no receive, qp0-2 RTS" untouched srv 0 1 2
	check "n2: nothing placed in the IPv6 pair's MR, v6 qp0-1 RTS" \
		untouched v6/srv 0 1
	check "qp0: legit WRITE+SEND still works (PSN state untouched)" xfer_ok srv 0 0x21
	check "qp1: legit WRITE+SEND still works" xfer_ok srv 1 0x22
	check "qp2: legit WRITE+SEND still works" xfer_ok srv 2 0x23
	check "v6 qp0: legit WRITE+SEND still works" xfer_ok v6/srv 0 0x24
	check "v6 qp1: legit WRITE+SEND still works" xfer_ok v6/srv 1 0x25
fi

# ---- QP access flags (not only the MR's) are enforced
if part access; then
	check "n2: MR cleared to 0x00" lab_tcmd srv 'fill 0'
	check "qp3: QP access flags r+a (no REMOTE_WRITE)" lab_tcmd srv 'access 3 ra'
	check "qp4: QP access flags w+a (no REMOTE_READ)" lab_tcmd srv 'access 4 wa'
	check "qp7: QP access flags w+r (no REMOTE_ATOMIC)" lab_tcmd srv 'access 7 wr'
	check "qp3: RDMA WRITE completes REM_ACCESS" \
		lab_tcmd cli 'expect_op 3 write 0x8000 4096 0x77 REM_ACCESS'
	check "qp4: RDMA READ completes REM_ACCESS" \
		lab_tcmd cli 'expect_op 4 read 0x8000 4096 0 REM_ACCESS'
	check "qp7: FETCH_ADD completes REM_ACCESS" \
		lab_tcmd cli 'expect_op 7 fadd 0x9000 8 0 REM_ACCESS'
	check "n2: nothing written or added (MR all 0x00)" lab_tcmd srv 'check 0 1048576 0'
	check "qp0 (w+r+a): FETCH_ADD succeeds" \
		lab_tcmd cli 'expect_op 0 fadd 0x9000 8 0 SUCCESS'
	check "n2: ... and added 1" lab_tcmd srv 'check 0x9000 1 1'
	check "n2: MR filled with 0x3c" lab_tcmd srv 'fill 0x3c'
	check "qp0 (w+r+a): READ succeeds, data 0x3c" \
		lab_tcmd cli 'expect_op 0 read 0 4096 0x3c SUCCESS'
fi

# ---- an RTR QP does not take its PSN space from an ACK it did not ask for
if part anchor; then
	check "n2: MR filled with 0x3c" lab_tcmd srv 'fill 0x3c'
	check "nobody@evil: bogus ACKs at RTR qp5" \
		spoof 1 n2 "ip netns exec evil $NOBODY" ack_anchor --dst $SRV $V4INFO --qp 5
	check "n1 (the peer's address): bogus ACKs at RTR qp6" \
		spoof 0 n1 "" ack_anchor --dst $SRV $V4INFO --qp 6
	sleep 1
	check "qp5: READ from the RTR QP succeeds, data 0x3c" \
		lab_tcmd cli 'expect_op 5 read 0 4096 0x3c SUCCESS'
	check "qp6: READ from the RTR QP succeeds, data 0x3c" \
		lab_tcmd cli 'expect_op 6 read 0 4096 0x3c SUCCESS'
	check "qp5, qp6: to RTS" eval "lab_tcmd srv 'rts 5' && lab_tcmd srv 'rts 6'"
	check "qp5: WRITE+SEND after RTS" eval \
		"lab_tcmd cli 'xfer 5 0x45 4096' && lab_tcmd srv 'check 0 4096 0x45'"
	check "qp6: WRITE+SEND after RTS" eval \
		"lab_tcmd cli 'xfer 6 0x46 4096' && lab_tcmd srv 'check 0 4096 0x46'"
fi

# ---- kernel ULP QPs: nvmet-rdma
if part kernel; then
	check "n2: nvmet-rdma exports /dev/ram0 on $SRV:4420" \
		lab_nvmet_up n2 $NQN $SRV 16384
	check "n1: nvme connect -t rdma" connect
	check "n1: NVMe I/O before the attack (128 KiB verified)" nvme_io 0
	n2 'rdma -dd res show qp link mrc0/1; rdma -j -dd res show qp link mrc0/1' \
		>"$LAB_RUN/kqps.txt" 2>&1
	KQPS=$(kqps)
	lab_log "nvmet kernel QPs (qpn cum): $KQPS"
	check "n2: nvmet's kernel RC QPs found (RTS)" test -n "$KQPS"
	for kq in $(cut -d' ' -f1 <<<"$KQPS"); do
		check "nobody@n2: spoof at nvmet QP $kq, at the PSN it expects" \
			kspoof "$NOBODY" "$kq"
		check "nobody@evil: spoof at nvmet QP $kq, at the PSN it expects" \
			kspoof "ip netns exec evil $NOBODY" "$kq"
	done
	sleep 2
	check "n2: the same nvmet QPs, all still RTS" \
		eval "[ \"\$(kqps | cut -d' ' -f1)\" = \"$(cut -d' ' -f1 <<<"$KQPS")\" ]"
	check "n1: NVMe I/O after the attack (128 KiB verified)" nvme_io $MIB
	check "n2: /dev/ram0 holds both writes" \
		eval "target_has 0 && target_has $MIB"
	check "n1: nvme disconnect" n1 "nvme disconnect -n $NQN"
	check "n2: nvmet-rdma down" lab_nvmet_down n2 $NQN
fi

# ---- counters and trace
stats >"$LAB_RUN/stats.after"
check "n2: peer_drops rose by at least $EXPECT (forged packets counted)" \
	eval "b=\$(ctr $LAB_RUN/stats.before peer_drops); a=\$(ctr $LAB_RUN/stats.after peer_drops)
echo \"peer_drops \$b -> \$a, expected +$EXPECT\"; [ -n \"\$a\" ] && [ \$((a - b)) -ge $EXPECT ]"
# (no part that forges packets ran: no drop to trace)
[ "$EXPECT" -eq 0 ] ||
	check "n2: metaroce_rx_drop traced the drops as 'peer'" \
		n2 'T=/sys/kernel/tracing; echo 0 >$T/tracing_on
grep -c "metaroce_rx_drop: peer" $T/trace | tee /dev/stderr | grep -qv "^0$"'

check "mrc_target quit" eval "lab_tcmd srv quit && lab_tcmd cli quit &&
lab_tcmd v6/srv quit && lab_tcmd v6/cli quit && lab_wait srv >/dev/null &&
lab_wait cli >/dev/null && lab_wait srv6 >/dev/null && lab_wait cli6 >/dev/null"
check "n1: metaroce.ko unloads" n1 'rdma link del mrc0 && rmmod metaroce'
check "n2: metaroce.ko unloads" n2 'rdma link del mrc0 && rmmod metaroce'

lab_summary
