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
# printed. Runs: ~8 s each under emulation on a quiet host (300: ~40
# min), ~25 s at a load of 10.
#
# perftest's own figure is void when its CPU clock calibration fails: it
# fits 200 gettimeofday/TSC samples, and when r^2 < 0.9 (a vCPU stalled by
# a loaded host) it prints "Correlation coefficient r^2: ... < 0.9" and
# takes the clock as 0 MHz, reporting 0.00 MB/s with rc 0 while the data
# flowed (the benchmark's "0.00 MiB/s, rc 0"). Such a run is judged by the
# bytes n2's mrc0 received instead (rx_bytes delta / STALL_SECS >= 1 MB/s)
# and counted apart. STALL_VERDICT=DIR re-judges the runs kept in DIR (a
# run directory's stall/) without a lab, to test the judgement itself.
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

# ctr_delta DIR NODE NAME: counter NAME's change on NODE over the run
ctr_delta() {
	awk -v n="$3" '$1 == n { v[FILENAME] = $2 } END { print v[ARGV[2]] - v[ARGV[1]] }' \
		"$1/ctr-before-$2" "$1/ctr-after-$2"
}

# verdict DIR RC: did the run kept in DIR make progress? Prints the run's
# summary line ("rc R, B MB/s" and, when perftest's clock failed, what the
# transport moved); returns 0 (progress), 1 (none)
verdict() {
	local d=$1 rc=$2 bw rx
	# the "65536 iters BW_peak BW_avg ..." line: BW average, MB/s
	bw=$(awk '$1 == 65536 { print $4 }' "$d/client.txt" | tail -1)
	if grep -q 'Correlation coefficient r^2' "$d/client.txt"; then
		rx=$(ctr_delta "$d" n2 rx_bytes)
		echo "rc $rc, ${bw:-none} MB/s (perftest clock calibration failed;" \
			"n2 received ${rx:-none} bytes in ${SECS}s)"
		[ "$rc" -eq 0 ] && awk -v b="${rx:-0}" -v s="$SECS" 'BEGIN { exit !(b / s >= 1000000) }'
		return
	fi
	echo "rc $rc, ${bw:-none} MB/s"
	[ "$rc" -eq 0 ] && awk -v b="${bw:-0}" 'BEGIN { exit !(b >= 1) }'
}

if [ -n "${STALL_VERDICT:-}" ]; then
	bad=0
	for d in "$STALL_VERDICT"/*/; do
		# a run cut short (the loop stopped) has no closing counters
		if [ ! -f "$d/client.txt" ] || [ ! -f "$d/ctr-after-n2" ]; then
			continue
		fi
		if line=$(verdict "${d%/}" "$(cat "$d/rc" 2>/dev/null || echo 0)"); then
			echo "ok    run ${d%/}: $line"
		else
			echo "FAIL  run ${d%/}: $line"
			bad=$((bad + 1))
		fi
	done
	echo "$bad runs without progress"
	exit $((bad != 0))
fi

# one_run I: ib_write_bw pair, watchers on both nodes; goodput > 1 MiB/s
one_run() {
	local i=$1 d=$LAB_RUN/stall/$1 rc n line ok
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
	echo "$rc" >"$d/rc"
	touch "$d/stop"
	for n in n1 n2; do
		lab_wait "watch-$n-$i" >/dev/null
		ctr $n >"$d/ctr-after-$n"
	done
	line=$(verdict "$d" "$rc")
	ok=$?
	echo "run $i: $line" >>"$LAB_RUN/stall/summary"
	if [ $ok -ne 0 ]; then
		echo "run $i: $line"
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
echo "# $(grep -c 'clock calibration failed' "$LAB_RUN/stall/summary") runs with perftest's clock calibration failed (judged by rx_bytes)"
grep -v 'clock calibration failed' "$LAB_RUN/stall/summary" | awk '{ print $5 }' | sort -n |
	awk '{ v[NR] = $1 } END { if (NR) printf "# goodput MB/s: min %s median %s max %s over %d runs\n", v[1], v[int((NR + 1) / 2)], v[NR], NR }'
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
check "n2: rdma link delete mrc0" n2 rdma link delete mrc0
lab_summary
