#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# teardown: tear metaroce down under traffic, TEARDOWN_CYCLES times (1
# here, in CI: ~7-8 min; teardown-long.sh runs 20), every step bounded by a timeout
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
# (every opcode) between the nodes, and (TEARDOWN_READ_CASES, "delete
# kill") pipelined ib_read_bw from n1:
#   delete  rdma link delete mrc0 on n1
#   updown  ip link set eth0 down, 2 s, up on n1
#   netns   ip netns del of a namespace holding mrcv1 (and its veth), while
#           processes of the root namespace run traffic over mrcv1
#   rmmod   rdma link delete mrc0 and rmmod metaroce on n1
#   kill    kill -9 of the n1 processes
# and the same under NVMe-oF I/O (nvdelete nvupdown nvrmmod nvkill, and
# nvtarget: the target's device deleted; "NVMe-oF" below says more).
# (No NVMe netns case: nvme-rdma and nvmet-rdma create their rdma_cm IDs
# in init_net only.)
# After each: every process on both nodes has ended (by itself, or at
# once when killed), n1 holds no verbs object but the GSI QP, and a
# data-verified pingpong between the nodes works. Throughout, both nodes read every QP's
# transport state (rdma -dd res show qp) in a loop, racing QP destroy.
# The kernel log must stay clean (lab_stop), "waiting for ... to become
# free" (a netdev reference never put) included.
# Knobs: TEARDOWN_CYCLES (1), TEARDOWN_CASES ("delete updown netns kill
# nvdelete": one NVMe case, the device deleted under I/O, and no rmmod --
# qplife.sh removes the peer's device and module under a window of WRITEs
# and SENDs -- to keep CI's time; teardown-long.sh runs all ten), TD_STEP (s, bound of a teardown step, 30), TD_SELF (s, how long
# the processes get to end by themselves, 5), TD_KILL (s, bound for them
# to go after kill -9, 10), TD_END (s, bound for traffic to come back
# after a netdev down/up, and for an nvme controller to be live again,
# 60), NV_LOSS (s, nvme connect --ctrl-loss-tmo, 60). TD_SCALE multiplies those defaults and the
# scenario's waits for traffic and listeners: 1 on the stock kernel, 4 on
# the debug kernel (LAB_KVER *-debug: KASAN + lockdep under TCG run every
# step 3-4x slower; measured there: netns devices gone in 38.9 s).
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=selftests/lab/lib/nvme.sh
. "$(dirname "$0")/lib/nvme.sh"

TD_SCALE=${TD_SCALE:-$LAB_SCALE}
CYCLES=${TEARDOWN_CYCLES:-1}
CASES=${TEARDOWN_CASES:-delete updown netns kill nvdelete}
# the cases that also run pipelined READs (traffic_nodes): in CI the two
# that destroy n1's QPs outright (the READ stream costs each case ~30 s
# of the guests' CPU); teardown-long.sh runs it in every case
READ_CASES=${TEARDOWN_READ_CASES:-delete kill}
TD_STEP=${TD_STEP:-$((30 * TD_SCALE))}
TD_END=${TD_END:-$((60 * TD_SCALE))}
TD_SELF=${TD_SELF:-$((5 * TD_SCALE))}
TD_KILL=${TD_KILL:-$((10 * TD_SCALE))}
DUR=120			# ib_write_bw -D: longer than any case
PT="-F --report_gbits -s 65536 -b -D $DUR"
RPT="-F --report_gbits -s 65536 -D $DUR -p 18521"
PROCS="ib_write_bw ib_read_bw mrc_verbs_test fio"
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

# flowing.sh DEV SECS [COUNTER [MIN]]: exit 0 once DEV's COUNTER
# (tx_data_packets) rose by more than MIN (200), 2 if no traffic process
# is left, 1 after SECS s. It reads the counter from sysfs (hw_counters,
# the same numbers as `rdma statistic`) with the shell's read: no process
# to start on a guest whose CPU the pollers of the traffic take. With
# `rdma statistic`, the delete case's three checks (n1, n2, n1's
# rx_deferred) took 45.7 s one after the other; read from sysfs, with
# n2's beside n1's, 20.3 s (the whole CI form: 538 -> 426 s).
flowing_script() {
	cat >"$LAB_RUN/flowing.sh" <<EOF
#!/bin/bash
dev=\$1 ctr=\${3:-tx_data_packets} min=\${4:-200}
f=/sys/class/infiniband/\$dev/ports/1/hw_counters/\$ctr
read -r a <\$f 2>/dev/null || a=0	# (no device yet: 0, as rdma printed)
b=\$a end=\$((SECONDS + \$2))
while [ \$SECONDS -lt \$end ]; do
	sleep 0.3
	read -r b <\$f 2>/dev/null || b=\$a
	[ \$((b - a)) -gt \$min ] && { echo "\$1: \$ctr +\$((b - a))"; exit 0; }
	pidof $PROCS >/dev/null || { echo "\$1: no traffic process left"; exit 2; }
done
echo "\$1: \$ctr did not rise by more than \$min (\$a -> \$b)"
exit 1
EOF
	chmod +x "$LAB_RUN/flowing.sh"
}

# flowing NODE DEV: data packets leave DEV within 20 s (x TD_SCALE)
flowing() {
	lab_run "$1" /tmp/lab/flowing.sh "$2" $((20 * TD_SCALE))
}

# traffic_nodes: ib_write_bw -b and mrc_verbs_test, servers n2, clients n1;
# in the cases of READ_CASES also ib_read_bw (n1 the requester: its READs
# pipelined, so their responses queue for its QP's worker, kernel/rx.c,
# when n1 tears down)
traffic_nodes() {
	local rd=
	[[ " $READ_CASES " == *" $CASE "* ]] && rd=1
	# no READ stream this case: collect must not find the last one's
	[ -n "$rd" ] || rm -f "$LAB_RUN/bg/rd_s" "$LAB_RUN/bg/rd_c"
	# shellcheck disable=SC2086
	LAB_CMD_TIMEOUT=$((300 * TD_SCALE)) lab_bg n2 bw_s ib_write_bw -d mrc0 -x 1 $PT
	# shellcheck disable=SC2086
	[ -z "$rd" ] || LAB_CMD_TIMEOUT=$((300 * TD_SCALE)) lab_bg n2 rd_s ib_read_bw -d mrc0 -x 1 $RPT
	LAB_CMD_TIMEOUT=$((300 * TD_SCALE)) lab_bg n2 vt_s "$VBIN" -d mrc0 -g 1 -t $((10 * TD_SCALE))
	lab_wait_for n2 "ss -ltn | grep -q :18515 && ss -ltn | grep -q :18517 &&
		{ [ -z '$rd' ] || ss -ltn | grep -q :18521; }" $((30 * TD_SCALE)) ||
		return 1
	# shellcheck disable=SC2086
	LAB_CMD_TIMEOUT=$((300 * TD_SCALE)) lab_bg n1 bw_c ib_write_bw -d mrc0 -x 1 $PT 192.0.2.2
	# shellcheck disable=SC2086
	[ -z "$rd" ] || LAB_CMD_TIMEOUT=$((300 * TD_SCALE)) lab_bg n1 rd_c ib_read_bw -d mrc0 -x 1 $RPT 192.0.2.2
	LAB_CMD_TIMEOUT=$((300 * TD_SCALE)) lab_bg n1 vt_c "$VBIN" -d mrc0 -g 1 -t $((10 * TD_SCALE)) 192.0.2.2
	# n2's check runs beside n1's
	lab_bg n2 flow_n2 /tmp/lab/flowing.sh mrc0 $((20 * TD_SCALE))
	flowing n1 mrc0 && { [ -z "$rd" ] || deferring n1; } && lab_wait flow_n2
}

# deferring NODE: READ responses reach NODE's QP worker (rx_deferred rises
# within 20 s x TD_SCALE): what the teardown then has queued to purge
deferring() {
	lab_run "$1" /tmp/lab/flowing.sh mrc0 $((20 * TD_SCALE)) rx_deferred 0
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

# dstate.sh SECS: exit 0 once no task is in state D (uninterruptible:
# stuck in the kernel), 1 after SECS s, printing those tasks and stacks
dstate_script() {
	cat >"$LAB_RUN/dstate.sh" <<'EOF'
#!/bin/bash
end=$((SECONDS + $1))
while :; do
	d=
	for f in /proc/[0-9]*/stat; do
		read -r l <"$f" 2>/dev/null || continue
		s=${l##*) }
		[ "${s%% *}" = D ] && d="$d ${f%/stat}"
	done
	[ -z "$d" ] && exit 0
	[ $SECONDS -lt $end ] || break
	sleep 0.5
done
for p in $d; do
	echo "state D for ${1}s: ${p#/proc/} $(cat "$p/comm" 2>/dev/null)"
	cat "$p/stack" 2>/dev/null
done
exit 1
EOF
	chmod +x "$LAB_RUN/dstate.sh"
}

# healthy: nothing left on n1 but the GSI QP, no task in D state on either
# node (for longer than 10 s), and the nodes talk
healthy() {
	lab_run n1 'rdma res show qp | grep -v "type GSI" | grep " mrc" && exit 1;
		    rdma res show mr | grep -q mrc && exit 1; true' || {
		echo "n1: objects left behind"
		return 1
	}
	lab_run n1 /tmp/lab/dstate.sh $((10 * TD_SCALE)) &&
		lab_run n2 /tmp/lab/dstate.sh $((10 * TD_SCALE)) || return 1
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
	collect bw_s rd_s vt_s bw_c rd_c vt_c
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
	collect bw_s rd_s vt_s bw_c rd_c vt_c
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
	collect bw_s rd_s vt_s bw_c rd_c vt_c
	check "[$CYCLE] rmmod: metaroce loaded again, mrc0 on n1" readd_n1
}

case_kill() {
	check "[$CYCLE] kill: traffic flows" traffic_nodes
	check "[$CYCLE] kill: kill -9 of the n1 processes" \
		n1 "kill -9 \$(pidof $PROCS)"
	check "[$CYCLE] kill: n1 processes gone" procs_end n1 "killed"
	check "[$CYCLE] kill: n2 processes end" procs_end n2 "peer killed"
	collect bw_s rd_s vt_s bw_c rd_c vt_c
}

# ---- NVMe-oF: a kernel ULP under the same teardowns ----
# n2's nvmet-rdma exports a 64 MiB brd disk, n1's nvme-rdma connects over
# mrc0 (lib/nvme.sh, as nvmeof.sh) with --reconnect-delay 2 and
# --ctrl-loss-tmo NV_LOSS (60 s x TD_SCALE: a host that cannot reconnect
# gives up, bounded); fio on n1 writes random 4-256 KiB blocks O_DIRECT,
# 8 threads of psync I/O on 8 disjoint 4 MiB regions (8 in flight), each
# block with a crc32c header it reads back and checks (verify_backlog),
# while the case runs:
#   nvdelete  rdma link delete mrc0 on n1: nvme-rdma's ib_client removal
#             deletes the controller (nvme_delete_ctrl) before the
#             device goes, fio ends with an I/O error
#   nvupdown  eth0 down, 2 s, up on n1: the controller is live again (the
#             transport rode the outage out, or nvme-rdma reconnected)
#   nvrmmod   rdma link delete mrc0 and rmmod metaroce on n1
#   nvkill    kill -9 of fio mid-transfer (in-flight O_DIRECT I/O)
#   nvtarget  rdma link delete mrc0 on n2, under the target; mrc0 added
#             back once the host saw the loss, and the port re-linked to
#             the subsystem in configfs (the listener's rdma_cm ID goes
#             with the device: stock nvmet-rdma re-listens by itself only
#             on an address change); the host reconnects
# After each: fio has ended (an I/O error is fine, a verify failure is
# not), the controller is gone (nvdelete, nvrmmod) or live and disconnected
# by `nvme disconnect` (the others), n2 holds no QP but the GSI QP (the
# target's queues went), and healthy's checks. Each case's controller
# state timeline and fio's end go to nvme.txt (printed at the end).
NV_DUR=300			# fio --runtime: longer than any case
NV_LOSS=${NV_LOSS:-$((60 * TD_SCALE))}
NV_UP=

# nv.sh CMD (guest): the NVMe helpers of the cases
nv_script() {
	{
		echo '#!/bin/bash'
		printf '%s\n' "$NSDEV"
		cat <<'EOF2'
case $1 in
fio)	# fio OUT SECS: verified random writes until SECS or an error
	# (a block device: fio takes a path it cannot stat for a file,
	# which it would unlink and create, on /dev)
	d=$(nsdev) && [ -b "$d" ] || { echo "no namespace" >"$2"; exit 1; }
	fio --allow_file_create=0 --name=td --filename="$d" --direct=1 --ioengine=psync \
	    --thread --numjobs=8 --size=4M --offset_increment=4M \
	    --rw=randwrite --bsrange=4k-256k --verify=crc32c \
	    --verify_backlog=16 --verify_fatal=1 --time_based --runtime="$3" \
	    >"$2" 2>&1
	rc=$?
	echo "fio rc=$rc" >>"$2"
	exit $rc ;;
flowing) # flowing SECS: 20 more writes complete on the namespace within
	# SECS s (fio, 85 libraries read over 9p, can take a minute to start)
	# (writes completed, over the namespace's disks: 6.1's multipath
	# head disk counts none, its path disk nvmeXcYnZ does)
	d=$(nsdev) || { echo "no namespace"; exit 1; }
	w() {
		local f x s=0
		for f in /sys/block/nvme*/stat; do
			read -r _ _ _ _ x _ <"$f" && s=$((s + x))
		done
		echo $s
	}
	a=$(w) end=$((SECONDS + $2))
	while [ $SECONDS -lt $end ]; do
		sleep 0.5
		[ $(($(w) - a)) -ge 20 ] && { echo "$d: $(($(w) - a)) writes"; exit 0; }
		pidof fio >/dev/null || [ $SECONDS -lt $((end - $2 + 60)) ] ||
			{ echo "no fio process"; exit 1; }
	done
	echo "$d: no writes ($a -> $(w) in $2 s)"; exit 1 ;;
state)	c=$(nvctrl) && cat "$c/state" || echo gone ;;
gone)	while nvctrl >/dev/null; do sleep 0.2; done ;;
live)	# the controller is (again) live; status 1 at once if it is gone
	while :; do
		c=$(nvctrl) || { echo "controller gone"; exit 1; }
		[ "$(cat "$c/state")" = live ] && exit 0
		sleep 0.2
	done ;;
notlive) while c=$(nvctrl) && [ "$(cat "$c/state")" = live ]; do sleep 0.1; done ;;
watch)	# watch OUT: the controller's state transitions, s since start,
	# until /tmp/nvwatch.stop appears
	rm -f /tmp/nvwatch.stop
	t0=$(date +%s%N) last=
	until [ -e /tmp/nvwatch.stop ]; do
		c=$(nvctrl) && s=$(cat "$c/state" 2>/dev/null) || s=gone
		if [ "$s" != "$last" ]; then
			t=$((($(date +%s%N) - t0) / 1000000))
			printf '%s(%d.%03ds) ' "$s" $((t / 1000)) $((t % 1000)) >>"$2"
			last=$s
		fi
		sleep 0.1
	done ;;
reconnects) dmesg | grep -c 'Successfully reconnected' ;;
rw)	# rw OFF LEN: O_DIRECT write of random bytes at OFF, read back, cmp
	d=$(nsdev) || exit 1
	head -c "$3" /dev/urandom >/tmp/nvpat
	dd if=/tmp/nvpat of="$d" bs="$3" count=1 seek="$2" oflag=direct,seek_bytes \
	   conv=notrunc status=none &&
	dd if="$d" of=/tmp/nvrd bs="$3" count=1 skip="$2" iflag=direct,skip_bytes status=none &&
	cmp /tmp/nvpat /tmp/nvrd ;;
*)	echo "nv.sh: $1?"; exit 2 ;;
esac
EOF2
	} >"$LAB_RUN/nv.sh"
	chmod +x "$LAB_RUN/nv.sh"
}
NV=/tmp/lab/nv.sh

# nv_setup: the target on n2, the host modules on n1 (once)
nv_setup() {
	[ -n "$NV_UP" ] && return 0
	NV_UP=1
	nv_script
	check "n2: nvmet-rdma exports brd /dev/ram0 as $NVME_NQN on rdma $NVME_SRV:4420" \
		lab_nvmet_up n2 "$NVME_NQN" "$NVME_SRV" 65536
	check "n1: nvme-rdma loads (nvme_core ${LAB_NVME_CORE_OPTS:-defaults})" lab_nvme_host n1
}

# nv_start: connect, the state watcher and fio on n1; data flows over mrc0
nv_start() {
	NV_R0=$(n1 "$NV reconnects")
	check "[$CYCLE] $CASE: nvme connect -t rdma over mrc0, namespace appears" \
		nvme_connect n1 --reconnect-delay=2 --ctrl-loss-tmo="$NV_LOSS"
	LAB_CMD_TIMEOUT=600 lab_bg n1 nv_watch "$NV watch /tmp/lab/nvstate-$CYCLE-$CASE.txt"
	LAB_CMD_TIMEOUT=$((NV_DUR + 60)) lab_bg n1 nv_io \
		"$NV fio /tmp/lab/fio-$CYCLE-$CASE.txt $NV_DUR"
	check "[$CYCLE] $CASE: fio's verified writes complete on the namespace" \
		n1 "$NV flowing $((120 * TD_SCALE))"
	check "[$CYCLE] $CASE: ... over mrc0" flowing n1 mrc0
}

# nv_fio_clean [FILE]: fio reported no verify failure (an I/O error is
# fine). Why psync and not libaio: when the controller goes (nvdelete,
# nvrmmod) the namespace shrinks to 0 bytes and an O_DIRECT read past its
# end returns 0 bytes without reaching the disk; fio's async completion
# path (io_completed) then verifies the untouched buffer, which still holds
# an earlier write's block ("bad header offset A, wanted B"), while its
# sync path fails such a read EIO ("full resid"). Measured on a loop device
# shrunk under fio (LOOP_SET_STATUS64 sizelimit, data intact): libaio
# reported verify failures in 7 of 12 runs, psync in 0 of 12.
nv_fio_clean() {
	local f=${1:-$LAB_RUN/fio-$CYCLE-$CASE.txt}
	local pat='verify failed|verify: bad|bad magic|bad header|verify type mismatch'
	[ -f "$f" ] || { echo "no $f"; return 1; }
	grep -E 'fio rc=|error|terminat' "$f" | sort | uniq -c
	! grep -Ei "$pat" "$f"
}

# nv_stop_io: fio ends on SIGTERM within TD_SELF s (in-flight I/O
# completes), else kill -9 (procs_end)
nv_stop_io() {
	check "[$CYCLE] $CASE: fio ends on SIGTERM" n1 "kill -TERM \$(pidof fio) 2>/dev/null; true"
	check "[$CYCLE] $CASE: n1 processes end" procs_end n1 "$1"
}

# nv_finish: the watcher stops, fio's verdict, the outcome line, n2's
# target queues gone
nv_finish() {
	local st
	n1 'touch /tmp/nvwatch.stop' >/dev/null
	collect nv_watch nv_io
	check "[$CYCLE] $CASE: fio saw no verify failure" nv_fio_clean
	st=$(cat "$LAB_RUN/nvstate-$CYCLE-$CASE.txt" 2>/dev/null)
	printf '# nvme [%s] %-8s ctrl: %s| reconnects %s | fio: %s\n' "$CYCLE" "$CASE" \
		"${st:-?}" "$(($(n1 "$NV reconnects") - NV_R0))" \
		"$(grep -hoE 'fio rc=[0-9]+|err= *[0-9]+|error=[^)]*|signal [0-9]+|WRITE: .*io=[0-9.]+[KMG]iB' \
			"$LAB_RUN/fio-$CYCLE-$CASE.txt" 2>/dev/null | sed 's/WRITE: .*io=/written /' |
			sort -u | tr '\n' ' ')" |
		tee -a "$LAB_RUN/nvme.txt"
	check "[$CYCLE] $CASE: n2 holds no QP but GSI (the target's queues went)" n2 \
		"$T 'n2 target queues gone ($CASE)' $TD_STEP sh -c 'while rdma res show qp | grep -v \"type GSI\" | grep -q \" mrc\"; do sleep 0.2; done'"
}

# nv_disconnect: nvme disconnect of the (live) controller, bounded
nv_disconnect() {
	check "[$CYCLE] $CASE: nvme disconnect (< ${TD_STEP}s)" n1 \
		"$T 'nvme disconnect ($CASE)' $TD_STEP nvme disconnect -n $NVME_NQN | grep 'disconnected 1 controller'"
}

case_nvdelete() {
	nv_start
	check "[$CYCLE] nvdelete: rdma link delete mrc0 on n1 under NVMe I/O (< ${TD_STEP}s)" \
		n1 "$T 'rdma link delete (nvme)' $TD_STEP rdma link delete mrc0"
	check "[$CYCLE] nvdelete: the nvme controller is gone" \
		n1 "$T 'nvme controller gone (delete)' $TD_STEP $NV gone"
	check "[$CYCLE] nvdelete: n1 processes end" procs_end n1 "link deleted, nvme"
	nv_finish
	check "[$CYCLE] nvdelete: mrc0 re-added on n1" readd_n1
}

case_nvrmmod() {
	nv_start
	check "[$CYCLE] nvrmmod: rdma link delete mrc0, rmmod metaroce on n1 under NVMe I/O" \
		n1 "$T 'link delete + rmmod (nvme)' $TD_STEP sh -c 'rdma link delete mrc0 && until rmmod metaroce; do sleep 0.5; done'"
	check "[$CYCLE] nvrmmod: the nvme controller is gone" \
		n1 "$T 'nvme controller gone (rmmod)' $TD_STEP $NV gone"
	check "[$CYCLE] nvrmmod: n1 processes end" procs_end n1 "module removed, nvme"
	nv_finish
	check "[$CYCLE] nvrmmod: metaroce loaded again, mrc0 on n1" readd_n1
}

case_nvupdown() {
	nv_start
	check "[$CYCLE] nvupdown: eth0 down, 2 s, up on n1 under NVMe I/O" \
		n1 "$T 'eth0 down/up (nvme)' $TD_STEP sh -c 'ip link set eth0 down; sleep 2; ip link set eth0 up'"
	check "[$CYCLE] nvupdown: the nvme controller is live again" \
		n1 "$T 'nvme controller live (updown)' $TD_END $NV live"
	check "[$CYCLE] nvupdown: fio's writes complete again" \
		n1 "$T 'nvme I/O back (updown)' $((TD_END + 10)) $NV flowing $TD_END"
	nv_stop_io "eth0 down/up, SIGTERM"
	nv_disconnect
	nv_finish
}

case_nvkill() {
	nv_start
	check "[$CYCLE] nvkill: kill -9 of fio mid-transfer" n1 "kill -9 \$(pidof fio)"
	check "[$CYCLE] nvkill: n1 processes gone" procs_end n1 "killed, nvme"
	check "[$CYCLE] nvkill: the controller stays live" n1 "[ \$($NV state) = live ]"
	check "[$CYCLE] nvkill: then a 1 MiB O_DIRECT write reads back equal" \
		n1 "$NV rw $((40 * 1024 * 1024)) $((1024 * 1024))"
	nv_disconnect
	nv_finish
}

# nv_target_back: mrc0 back on n2 with its IPv4 GID, then nvmet's port 1
# re-linked to the subsystem (a new listener: "enabling port" once more)
nv_target_back() {
	local c=/sys/kernel/config/nvmet
	n2 rdma link add mrc0 type metaroce netdev eth0 && gidx n2 mrc0 "$NVME_SRV" &&
		n2 "set -e
e=\$(dmesg | grep -c 'enabling port 1 ($NVME_SRV:4420)')
rm $c/ports/1/subsystems/$NVME_NQN
ln -s $c/subsystems/$NVME_NQN $c/ports/1/subsystems/$NVME_NQN
[ \$(dmesg | grep -c 'enabling port 1 ($NVME_SRV:4420)') -gt \$e ]"
}

case_nvtarget() {
	nv_start
	check "[$CYCLE] nvtarget: rdma link delete mrc0 on n2 (the target) under NVMe I/O (< ${TD_STEP}s)" \
		n2 "$T 'n2 rdma link delete (nvme target)' $TD_STEP rdma link delete mrc0"
	check "[$CYCLE] nvtarget: the host sees the loss (controller not live)" \
		n1 "$T 'host sees target loss' $TD_STEP $NV notlive"
	check "[$CYCLE] nvtarget: mrc0 re-added on n2, port 1 re-linked, listening again" nv_target_back
	check "[$CYCLE] nvtarget: the nvme controller reconnects" \
		n1 "$T 'nvme controller reconnected (target)' $TD_END $NV live"
	check "[$CYCLE] nvtarget: fio's writes complete again" \
		n1 "$T 'nvme I/O back (target)' $((TD_END + 10)) $NV flowing $TD_END"
	nv_stop_io "target device deleted and re-added, SIGTERM"
	nv_disconnect
	nv_finish
}

lab_start
timed_script
flowing_script
dstate_script
for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
	# restrack readers racing every QP's destroy, for the whole run
	LAB_CMD_TIMEOUT=7200 lab_bg $n res_$n 'echo $$ >/tmp/resloop.pid
while :; do rdma -dd res show qp >/dev/null 2>&1; rdma -dd res show cq >/dev/null 2>&1; done'
done

for CYCLE in $(seq "$CYCLES"); do
	for CASE in $CASES; do
		case $CASE in nv*) nv_setup ;; esac
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
[ -f "$LAB_RUN/nvme.txt" ] && cat "$LAB_RUN/nvme.txt"
if [ -n "$NV_UP" ]; then
	check "n1: nvme-rdma unloads" n1 modprobe -r nvme-rdma
	check "n2: target torn down, nvmet-rdma nvmet brd unload" lab_nvmet_down n2 "$NVME_NQN"
fi
for n in n1 n2; do
	check "$n: rdma link delete mrc0" lab_run $n rdma link delete mrc0
	check "$n: rmmod metaroce" lab_run $n rmmod metaroce
done
lab_summary
