#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# profile.sh: where does the CPU go during ib_write_bw? Boots the two-node
# lab, loads metaroce (and rdma_rxe, to compare), runs ib_write_bw 64 KiB
# with `perf record -a -g` on both nodes and prints the top of `perf report`
# per node, plus the guest CPU split from /proc/stat.
#
#   scripts/profile.sh [metaroce|rxe|both] [SECONDS]
#
# Output: build/profile/<dev>-<node>.txt (perf report --no-children, the
# symbols that cost the most, self time), printed in short as well;
# <dev>-<node>-children.txt (inclusive time) and <dev>-<node>-callers.txt
# (the call chains into the hottest symbols).
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHO=${1:-both}
DUR=${2:-10}
LAB_NAME=profile
# shellcheck source=scripts/lab/lab.sh
. "$ROOT/scripts/lab/lab.sh"
OUT=$ROOT/build/profile
mkdir -p "$OUT"

command -v perf >/dev/null || lab_fatal "perf is not installed (scripts/setup.sh installs linux-perf)"
lab_start
lab_load_contenders

# profile DEV GID: server on n2, client on n1, perf on both for the run
profile() {
	local dev=$1 gid=$2 n
	lab_bg n2 srv ib_write_bw -d "$dev" -x "$gid" -F -s 65536 -D "$DUR"
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	lab_bg n2 perf-n2 "perf record -q -a -g -F 499 -o /tmp/perf-$dev.data -- sleep $((DUR + 3)) 2>&1 | tail -2"
	sleep 1
	lab_bg n1 cli "head -1 /proc/stat >/tmp/stat0
perf record -q -a -g -F 499 -o /tmp/perf-$dev.data -- ib_write_bw -d $dev -x $gid -F -s 65536 -D $DUR 192.0.2.2 | grep -E '^ *65536'
head -1 /proc/stat >/tmp/stat1
paste /tmp/stat0 /tmp/stat1 | awk '{printf \"n1 cpu: user %d sys %d softirq %d idle %d (ticks)\\n\", \$13-\$2, \$15-\$4, \$19-\$8, \$16-\$5}'"
	# host side: where the qemu processes spend the host's two cores
	# (vCPU thread "CPU 0/TCG" vs the I/O main loop) during the run
	sleep 3
	local hp=()
	for n in n1 n2; do
		pid=$(cat "$LAB_RUN/$n/qemu.pid")
		perf record -q -F 499 -p "$pid" -o "$OUT/host-$dev-$n.data" \
			-- sleep $((DUR - 4)) >/dev/null 2>&1 &
		hp+=($!)
	done
	if [ "$dev" = mrc0 ]; then
		sleep $((DUR / 2))
		echo "--- n1 transport state mid-run (rdma res show qp -dd)"
		n1 'rdma -dd res show qp link mrc0/1'
		echo
	fi
	lab_wait cli
	wait "${hp[@]}"	# not a bare wait: the qemus are jobs of this shell too
	for n in n1 n2; do
		echo "--- host: qemu of $n by thread (samples at 499 Hz over $((DUR - 4)) s) ---"
		perf report -i "$OUT/host-$dev-$n.data" --sort comm --stdio 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -5
		echo "--- host: qemu of $n, hottest symbols ---"
		perf report -i "$OUT/host-$dev-$n.data" --sort dso,sym --stdio 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -12
	done
	lab_wait srv >/dev/null
	lab_wait perf-n2 >/dev/null
	[ "$dev" = mrc0 ] && for n in n1 n2; do
		echo "--- $n counters: $(lab_run $n rdma statistic show link mrc0/1 | tr -s ' ' | cut -d' ' -f4-)"
	done
	for n in n1 n2; do
		lab_run $n "perf report -i /tmp/perf-$dev.data --no-children --sort sym --stdio -g none --percent-limit 0.7 2>/dev/null | grep -v '^#' | grep -v '^\$'" >"$OUT/$dev-$n.txt"
		lab_run $n "perf report -i /tmp/perf-$dev.data --children --sort sym --stdio -g none --percent-limit 3 2>/dev/null | grep -v '^#' | grep -v '^\$'" >"$OUT/$dev-$n-children.txt"
		# who calls the hot symbols (for the file only)
		lab_run $n "perf report -i /tmp/perf-$dev.data --no-children --sort sym --stdio -g caller,0.5,callee,function,percent --percent-limit 2 2>/dev/null | grep -v '^#' | grep -v '^\$'" >"$OUT/$dev-$n-callers.txt"
		echo "--- $dev on $n (self time, top 25) ---"
		head -25 "$OUT/$dev-$n.txt"
		echo "--- $dev on $n (with children, top 40) ---"
		head -40 "$OUT/$dev-$n-children.txt"
	done
}

case $WHO in
metaroce) profile mrc0 1 ;;
rxe) profile rxe0 1 ;;
*) profile mrc0 1; profile rxe0 1 ;;
esac
lab_summary
