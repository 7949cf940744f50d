#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# teardown: tear metaroce down under traffic, TEARDOWN_CYCLES times (1
# here, in CI: ~4 min; teardown-long.sh runs 20), every step bounded by a timeout
# and its time reported:
#
#        n1                                          n2
#   +-----------------------------+            +------------------------+
#   | mrc0 -> eth0 192.0.2.1      |  metaroce  | mrc0 -> eth0 192.0.2.2 |
#   |   ib_write_bw -b client,    |<---------->|   ib_write_bw -b srv,  |
#   |   mrc_verbs_test client     |            |   mrc_verbs_test srv   |
#   | mrcv0 -> tdv0 192.0.3.1     |            +------------------------+
#   |   ==veth== [netns tdns]     |
#   | mrcv1 -> tdv1 192.0.3.2     |
#   |   ib_write_bw -b pair       |
#   |   mrcv1 <-> mrcv0           |
#   +-----------------------------+
#
# Cases, each under bidirectional ib_write_bw and an mrc_verbs_test run
# (every opcode) between the nodes:
#   delete  rdma link delete mrc0 on n1
#   updown  ip link set eth0 down, 2 s, up on n1
#   netns   ip netns del of a namespace holding mrcv1 (and its veth), while
#           processes of the root namespace run traffic over mrcv1
#   rmmod   rdma link delete mrc0 and rmmod metaroce on n1
#   kill    kill -9 of the n1 processes
# After each: every process on both nodes has ended (by itself, or at
# once when killed), n1 holds no verbs object but the GSI QP, and a
# data-verified pingpong between the nodes works. Throughout, both nodes read every QP's
# transport state (rdma -dd res show qp) in a loop, racing QP destroy.
# The kernel log must stay clean (lab_stop), "waiting for ... to become
# free" (a netdev reference never put) included.
# Knobs: TEARDOWN_CYCLES (1), TEARDOWN_CASES ("delete updown netns rmmod
# kill"), TD_STEP (s, bound of a teardown step, 30), TD_SELF (s, how long
# the processes get to end by themselves, 5), TD_KILL (s, bound for them
# to go after kill -9, 10), TD_END (s, bound for traffic to come back
# after a netdev down/up, 60). TD_SCALE multiplies those defaults and the
# scenario's waits for traffic and listeners: 1 on the stock kernel, 4 on
# the debug kernel (LAB_KVER *-debug: KASAN + lockdep under TCG run every
# step 3-4x slower; measured there: netns devices gone in 38.9 s).
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

case $LAB_KVER in
*-debug) TD_SCALE=${TD_SCALE:-4} ;;
*) TD_SCALE=${TD_SCALE:-1} ;;
esac
CYCLES=${TEARDOWN_CYCLES:-1}
CASES=${TEARDOWN_CASES:-delete updown netns rmmod kill}
TD_STEP=${TD_STEP:-$((30 * TD_SCALE))}
TD_END=${TD_END:-$((60 * TD_SCALE))}
TD_SELF=${TD_SELF:-$((5 * TD_SCALE))}
TD_KILL=${TD_KILL:-$((10 * TD_SCALE))}
DUR=120			# ib_write_bw -D: longer than any case
PT="-F --report_gbits -s 65536 -b -D $DUR"
PROCS="ib_write_bw mrc_verbs_test"
VBIN=$(lab_verbs_bin) || lab_fatal "cannot build mrc_verbs_test.c"
LAB_DMESG_BAD="$LAB_DMESG_BAD|to become free|hung_task|blocked for more than|soft lockup"

# timed.sh LABEL LIMIT CMD...: run CMD under `timeout LIMIT`, print and
# record (times-NODE.txt in the run directory) how long it took
timed_script() {
	cat >"$LAB_RUN/timed.sh" <<'EOF'
#!/bin/bash
label=$1 limit=$2
shift 2
s=$(date +%s%N)
timeout -k 5 "$limit" "$@"
rc=$?
ms=$((($(date +%s%N) - s) / 1000000))
printf 'time %s: %d.%03d s (limit %s s) rc=%d\n' "$label" $((ms / 1000)) \
	$((ms % 1000)) "$limit" "$rc"
echo "$label $ms $rc" >>"/tmp/lab/times-$MRC_NODE.txt"
exit $rc
EOF
	chmod +x "$LAB_RUN/timed.sh"
}
T=/tmp/lab/timed.sh

# ::ffff:A.B.C.D as the sysfs gid file prints it
v4gid() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}

# gid index of DEV's IPv4 address IP on NODE (waits for it, 10 s x TD_SCALE)
gidx() {
	lab_wait_for "$1" "grep -lx $(v4gid "$3") /sys/class/infiniband/$2/ports/1/gids/*" $((10 * TD_SCALE)) \
		>/dev/null || return 1
	lab_run "$1" "basename \$(grep -lx $(v4gid "$3") /sys/class/infiniband/$2/ports/1/gids/* | head -1)"
}

# flowing.sh DEV SECS: exit 0 once DEV sent 200 more data packets, 2 if
# no traffic process is left, 1 after SECS s
flowing_script() {
	cat >"$LAB_RUN/flowing.sh" <<EOF
#!/bin/bash
dev=\$1
c() { rdma statistic show link \$dev/1 | tr ' ' '\n' | grep -A1 -x tx_data_packets | tail -1; }
a=\$(c) b=\$(c) end=\$((SECONDS + \$2))
while [ \$SECONDS -lt \$end ]; do
	sleep 0.3
	b=\$(c)
	[ \$((b - a)) -gt 200 ] && { echo "\$1: \$((b - a)) data packets"; exit 0; }
	pidof $PROCS >/dev/null || { echo "\$1: no traffic process left"; exit 2; }
done
echo "\$1: no traffic (\$a -> \$b)"
exit 1
EOF
	chmod +x "$LAB_RUN/flowing.sh"
}

# flowing NODE DEV: data packets leave DEV within 20 s (x TD_SCALE)
flowing() {
	lab_run "$1" /tmp/lab/flowing.sh "$2" $((20 * TD_SCALE))
}

# traffic_nodes: ib_write_bw -b and mrc_verbs_test, servers n2, clients n1
traffic_nodes() {
	# shellcheck disable=SC2086
	LAB_CMD_TIMEOUT=300 lab_bg n2 bw_s ib_write_bw -d mrc0 -x 1 $PT
	LAB_CMD_TIMEOUT=300 lab_bg n2 vt_s "$VBIN" -d mrc0 -g 1 -t 10
	lab_wait_for n2 'ss -ltn | grep -q :18515 && ss -ltn | grep -q :18517' $((30 * TD_SCALE)) ||
		return 1
	# shellcheck disable=SC2086
	LAB_CMD_TIMEOUT=300 lab_bg n1 bw_c ib_write_bw -d mrc0 -x 1 $PT 192.0.2.2
	LAB_CMD_TIMEOUT=300 lab_bg n1 vt_c "$VBIN" -d mrc0 -g 1 -t 10 192.0.2.2
	flowing n1 mrc0 && flowing n2 mrc0
}

# procs_end NODE WHY: the traffic processes on NODE end by themselves
# within TD_SELF s (an application whose device is gone may well spin on
# its CQ until its own deadline: then it is killed), and in any case are
# gone within TD_KILL s of a kill -9 (a process stuck in the kernel is
# not): both times are recorded
procs_end() {
	LAB_CMD_TIMEOUT=$((TD_SELF + TD_KILL + 60)) lab_run "$1" "
$T '$1 processes end by themselves ($2)' $TD_SELF sh -c 'while pidof $PROCS >/dev/null; do sleep 0.2; done' && exit 0
pidof $PROCS >/dev/null || exit 0
kill -9 \$(pidof $PROCS) 2>/dev/null
$T '$1 processes gone after kill -9 ($2)' $TD_KILL sh -c 'while pidof $PROCS >/dev/null; do sleep 0.2; done'"
}

# collect: the background commands' output (their verdicts do not matter:
# they were cut off), into the run directory
collect() {
	local b
	for b in "$@"; do
		LAB_CMD_TIMEOUT=30 lab_wait "$b" >"$LAB_RUN/bg-$b-$CYCLE-$CASE.txt" 2>&1
	done
}

# healthy: nothing left on n1 but the GSI QP, and the nodes talk
healthy() {
	lab_run n1 'rdma res show qp | grep -v "type GSI" | grep " mrc" && exit 1;
		    rdma res show mr | grep -q mrc && exit 1; true' || {
		echo "n1: objects left behind"
		return 1
	}
	lab_pingpong ibv_rc_pingpong 20 4096
}

# mrc0 back on n1 (after delete / rmmod)
readd_n1() {
	lab_run n1 'grep -qw ^metaroce /proc/modules' || lab_load_metaroce n1 >/dev/null ||
		return 1
	lab_run n1 'rdma link show | grep -q "^link mrc0/"' ||
		lab_run n1 rdma link add mrc0 type metaroce netdev eth0 || return 1
	lab_wait_for n1 'grep -qw ACTIVE /sys/class/infiniband/mrc0/ports/1/state' $((10 * TD_SCALE))
}

case_delete() {
	check "[$CYCLE] delete: traffic flows" traffic_nodes
	check "[$CYCLE] delete: rdma link delete mrc0 on n1 (< ${TD_STEP}s)" \
		n1 "$T 'rdma link delete' $TD_STEP rdma link delete mrc0"
	check "[$CYCLE] delete: n1 processes end" procs_end n1 "link deleted"
	check "[$CYCLE] delete: n2 processes end" procs_end n2 "peer link deleted"
	collect bw_s vt_s bw_c vt_c
	check "[$CYCLE] delete: mrc0 re-added on n1" readd_n1
}

case_updown() {
	check "[$CYCLE] updown: traffic flows" traffic_nodes
	check "[$CYCLE] updown: eth0 down, 2 s, up on n1" \
		n1 "$T 'eth0 down/up' $TD_STEP sh -c 'ip link set eth0 down; sleep 2; ip link set eth0 up'"
	# the transport rides the outage out, or the applications end with
	# an error (the verbs test's completion waits are 10 s)
	check "[$CYCLE] updown: traffic flows again, or the processes ended" \
		n1 "$T 'traffic back or ended' $((TD_END + 10)) sh -c '/tmp/lab/flowing.sh mrc0 $TD_END; [ \$? != 1 ]'"
	check "[$CYCLE] updown: kill -9 of what runs on n1" \
		n1 "kill -9 \$(pidof $PROCS) 2>/dev/null; true"
	check "[$CYCLE] updown: n1 processes end" procs_end n1 "eth0 down/up, killed"
	check "[$CYCLE] updown: n2 processes end" procs_end n2 "peer eth0 down/up"
	collect bw_s vt_s bw_c vt_c
	check "[$CYCLE] updown: mrc0 ACTIVE on n1" lab_wait_for n1 \
		'grep -qw ACTIVE /sys/class/infiniband/mrc0/ports/1/state' $((10 * TD_SCALE))
}

case_netns() {
	local g0 g1
	check "[$CYCLE] netns: netns tdns, veth tdv0 | tdv1 (in tdns), mrcv0, mrcv1" n1 'set -e
ip netns add tdns
ip link add tdv0 type veth peer name tdv1
ip link set tdv1 netns tdns
ip addr add 192.0.3.1/24 dev tdv0
ip link set tdv0 up
ip -n tdns link set lo up
ip -n tdns addr add 192.0.3.2/24 dev tdv1
ip -n tdns link set tdv1 up
rdma link add mrcv0 type metaroce netdev tdv0
ip netns exec tdns rdma link add mrcv1 type metaroce netdev tdv1'
	if g0=$(gidx n1 mrcv0 192.0.3.1) && g1=$(gidx n1 mrcv1 192.0.3.2); then
		# both processes in the root namespace: tdns has none, so its
		# deletion is immediate while mrcv1's QPs are busy
		# shellcheck disable=SC2086
		LAB_CMD_TIMEOUT=300 lab_bg n1 ns_s ib_write_bw -d mrcv0 -x "$g0" $PT
		lab_wait_for n1 'ss -ltn | grep -q :18515' $((30 * TD_SCALE))
		# shellcheck disable=SC2086
		LAB_CMD_TIMEOUT=300 lab_bg n1 ns_c ib_write_bw -d mrcv1 -x "$g1" $PT 192.0.3.1
	fi
	check "[$CYCLE] netns: traffic mrcv1 <-> mrcv0 flows" flowing n1 mrcv1
	check "[$CYCLE] netns: ip netns del tdns" n1 "$T 'ip netns del' $TD_STEP ip netns del tdns"
	check "[$CYCLE] netns: mrcv1, mrcv0 and the veth pair go away" n1 \
		"$T 'netns devices gone' $TD_STEP sh -c 'while rdma link show | grep -q mrcv || ip link show tdv0 >/dev/null 2>&1; do sleep 0.2; done'"
	check "[$CYCLE] netns: n1 processes end" procs_end n1 "netns deleted"
	collect ns_s ns_c
}

case_rmmod() {
	check "[$CYCLE] rmmod: traffic flows" traffic_nodes
	check "[$CYCLE] rmmod: rdma link delete mrc0, rmmod metaroce on n1" \
		n1 "$T 'link delete + rmmod' $TD_STEP sh -c 'rdma link delete mrc0 && until rmmod metaroce; do sleep 0.5; done'"
	check "[$CYCLE] rmmod: n1 processes end" procs_end n1 "module removed"
	check "[$CYCLE] rmmod: n2 processes end" procs_end n2 "peer module removed"
	collect bw_s vt_s bw_c vt_c
	check "[$CYCLE] rmmod: metaroce loaded again, mrc0 on n1" readd_n1
}

case_kill() {
	check "[$CYCLE] kill: traffic flows" traffic_nodes
	check "[$CYCLE] kill: kill -9 of the n1 processes" \
		n1 "kill -9 \$(pidof $PROCS)"
	check "[$CYCLE] kill: n1 processes gone" procs_end n1 "killed"
	check "[$CYCLE] kill: n2 processes end" procs_end n2 "peer killed"
	collect bw_s vt_s bw_c vt_c
}

lab_start
timed_script
flowing_script
for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
	# restrack readers racing every QP's destroy, for the whole run
	LAB_CMD_TIMEOUT=7200 lab_bg $n res_$n 'echo $$ >/tmp/resloop.pid
while :; do rdma -dd res show qp >/dev/null 2>&1; rdma -dd res show cq >/dev/null 2>&1; done'
done

for CYCLE in $(seq "$CYCLES"); do
	for CASE in $CASES; do
		"case_$CASE"
		check "[$CYCLE] $CASE: afterwards, nothing left and the nodes talk" healthy
	done
done

for n in n1 n2; do
	# shellcheck disable=SC2016
	lab_run $n 'kill $(cat /tmp/resloop.pid)' >/dev/null
	LAB_CMD_TIMEOUT=30 lab_wait res_$n >/dev/null
done
# The times of every bounded step, per node: count, max and mean (ms).
for n in n1 n2; do
	[ -f "$LAB_RUN/times-$n.txt" ] || continue
	awk -v n="$n" '{ l = $0; sub(/ [0-9]+ [0-9]+$/, "", l); c[l]++; s[l] += $(NF-1);
		if ($(NF-1) > m[l]) m[l] = $(NF-1); if ($NF != 0) f[l]++ }
		END { for (l in c) printf "# %s: %-40s n=%d max=%.2fs mean=%.2fs%s\n", n, l, c[l],
			m[l] / 1000, s[l] / c[l] / 1000, f[l] ? " (" f[l] " over the limit)" : "" }' \
		"$LAB_RUN/times-$n.txt" | sort
done
for n in n1 n2; do
	check "$n: rdma link delete mrc0" lab_run $n rdma link delete mrc0
	check "$n: rmmod metaroce" lab_run $n rmmod metaroce
done
lab_summary
