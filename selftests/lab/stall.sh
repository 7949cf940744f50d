#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stall: back-to-back ib_write_bw runs on a clean link, each of which must
# make progress. The benchmark twice saw a run report 0.00 MiB/s with rc 0
# (no progress through perftest's measuring window); this loop is the
# regression test for that (issue "rare no-progress stall").
#
#        n1 (client)                                n2 (server)
#   +--------------------------+   metaroce/UDP  +--------------------------+
#   | mrc0 -> eth0             |<--------------->| mrc0 -> eth0             |
#   | ib_write_bw -D S 64 KiB  |   (no netem)    | ib_write_bw (server)     |
#   | watcher: rdma res -dd    |                 | watcher: rdma res -dd    |
#   +--------------------------+                 +--------------------------+
#
# STALL_RUNS runs (default 300) of STALL_SECS seconds (default 4). Each run
# records its goodput, the device counter deltas of both nodes and, every
# 0.5 s, both nodes' per-QP transport state (rdma res show qp -dd) into
# the run directory; a run below 1 MiB/s fails and its samples are
# printed. Runs: ~8 s each under emulation (300: ~40 min).
# lab: long (see scripts/test.sh)
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

RUNS=${STALL_RUNS:-300}
SECS=${STALL_SECS:-4}

# ctr NODE: "name value" lines of mrc0's counters
ctr() {
	lab_run "$1" 'rdma statistic show link mrc0/1' |
		tr ' ' '\n' | awk 'NF { if (k) { print k, $0; k = "" } else if ($0 ~ /^[a-z_]+$/) k = $0 }'
}

# one_run I: ib_write_bw pair, watchers on both nodes; goodput > 1 MiB/s
one_run() {
	local i=$1 d=$LAB_RUN/stall/$1 rc bw n
	mkdir -p "$d"
	for n in n1 n2; do
		ctr $n >"$d/ctr-before-$n"
		lab_bg $n "watch-$n-$i" "end=\$((SECONDS + $SECS + 20))
while [ \$SECONDS -lt \$end ] && [ ! -e /tmp/lab/stall/$i/stop ]; do
	echo \"@ \$(date +%T.%N | cut -c1-12)\"
	rdma -dd res show qp link mrc0/1 | grep -v 'type GSI'
	sleep 0.5
done >/tmp/lab/stall/$i/res-$n.txt 2>&1; true"
	done
	lab_perftest ib_write_bw -d mrc0 -x 1 -F -D "$SECS" -s 65536 -- \
		ib_write_bw -d mrc0 -x 1 -F -D "$SECS" -s 65536 192.0.2.2 \
		>"$d/client.txt" 2>&1
	rc=$?
	touch "$d/stop"
	for n in n1 n2; do
		lab_wait "watch-$n-$i" >/dev/null
		ctr $n >"$d/ctr-after-$n"
	done
	# the "65536 iters BW_peak BW_avg ..." line: BW average, MB/s
	bw=$(awk '$1 == 65536 { print $4 }' "$d/client.txt" | tail -1)
	echo "run $i: rc $rc, ${bw:-none} MB/s" >>"$LAB_RUN/stall/summary"
	if [ "$rc" -ne 0 ] || ! awk -v b="${bw:-0}" 'BEGIN { exit !(b >= 1) }'; then
		echo "run $i: rc $rc, goodput ${bw:-none} MB/s"
		cat "$d/client.txt"
		for n in n1 n2; do
			echo "--- $n counters (after - before, non-zero):"
			join "$d/ctr-before-$n" "$d/ctr-after-$n" |
				awk '$3 != $2 { print "  " $1, $3 - $2 }'
			echo "--- $n rdma res -dd samples (last 12):"
			tail -n 40 "$d/res-$n.txt"
		done
		return 1
	fi
}

lab_start
check "n1: mrc0 on eth0" lab_add_dev n1 mrc0
check "n2: mrc0 on eth0" lab_add_dev n2 mrc0
mkdir -p "$LAB_RUN/stall"
stalls=0
for i in $(seq "$RUNS"); do
	if ! out=$(one_run "$i"); then
		stalls=$((stalls + 1))
		printf '%s\n' "$out" >"$LAB_RUN/stall/$i/verdict"
		check "run $i of $RUNS made progress" false
		printf '%s\n' "$out" | sed 's/^/      | /' | head -n 120
	fi
done
check "$RUNS runs of ${SECS}s: $stalls without progress" test "$stalls" -eq 0
awk '{ print $5 }' "$LAB_RUN/stall/summary" | sort -n |
	awk '{ v[NR] = $1 } END { if (NR) printf "# goodput MB/s: min %s median %s max %s over %d runs\n", v[1], v[int((NR + 1) / 2)], v[NR], NR }'
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
check "n2: rdma link delete mrc0" n2 rdma link delete mrc0
lab_summary
