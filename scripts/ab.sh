#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ab.sh: A/B a tuning knob in one lab sitting. Boots the two-node lab, loads
# metaroce and rdma_rxe on eth0, then for each rep runs ib_write_bw 64 KiB
# once per variant, alternating, and prints the median MiB/s per variant.
#
#   scripts/ab.sh [-n REPS] [-D SECS] [-t TEST] [-s SIZE] [-o OPTS] VARIANT...
#
# TEST is a perftest binary (default ib_write_bw, 64 KiB messages, MiB/s);
# a *_lat test reports t_typical in usec (default size 2, 1000 iterations).
# OPTS are more perftest options for both ends (e.g. "-q 8").
#
# A variant is NAME=SHELL: SHELL runs on both nodes before the variant's run
# (e.g. to set a module parameter); a NAME starting with "rxe" runs on rxe0
# instead of mrc0. Example:
#   scripts/ab.sh rxe= a4='echo 4 >/sys/module/metaroce/parameters/ack_every' \
#                      a16='echo 16 >/sys/module/metaroce/parameters/ack_every'
# Parameters read at QP creation apply to the next run. Ratios only mean
# something within one sitting (TCG is noisy).
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=3
DUR=5
TEST=ib_write_bw
SIZE=
XOPTS=
while getopts n:D:t:s:o: o; do
	case $o in
	n) REPS=$OPTARG ;;
	D) DUR=$OPTARG ;;
	t) TEST=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	o) XOPTS=$OPTARG ;;
	*) sed -n '3,17p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '3,17p' "$0"; exit 2; }
read -ra xopt <<<"$XOPTS"
LAB_NAME=ab
# shellcheck source=scripts/lab/lab.sh
. "$ROOT/scripts/lab/lab.sh"

lab_start
lab_load_contenders

UNIT=MiB/s
[[ $TEST == *_lat ]] && UNIT=usec
declare -A res
for rep in $(seq "$REPS"); do
	for v in "$@"; do
		name=${v%%=*}
		code=${v#*=}
		dev=mrc0
		case $name in rxe*) dev=rxe0 ;; esac
		if [ -n "$code" ]; then
			n1 "$code" >/dev/null
			n2 "$code" >/dev/null
		fi
		if [[ $TEST == *_lat ]]; then
			sz=${SIZE:-2}
			opt=(-n 1000)
		else
			sz=${SIZE:-65536}
			opt=(-D "$DUR")
		fi
		out=$(lab_perftest "$TEST" -d $dev -x 1 -F -s "$sz" "${opt[@]}" "${xopt[@]}" -- \
			"$TEST" -d $dev -x 1 -F -s "$sz" "${opt[@]}" "${xopt[@]}" 192.0.2.2)
		if [[ $TEST == *_lat ]]; then
			mb=$(awk -v s="$sz" '$1 == s { print $5 }' <<<"$out")
		else
			mb=$(awk -v s="$sz" '$1 == s { print $4 * 1000000 / 1048576 }' <<<"$out")
		fi
		# perftest's CPU-MHz calibration failed (starved vCPU): its figures
		# print as 0.00 with rc 0; the run is void, not a result
		grep -q 'Correlation coefficient r^2' <<<"$out" && mb=VOID
		ctr=
		if [ $dev = mrc0 ]; then
			# transport counters of the sender, cumulative
			ctr=$(n1 rdma statistic show link mrc0/1 | tr ' ' '\n' |
				awk '/^(tx_data_packets|retx_packets|tlp|rto_events|spurious_rto|spurious_retx|acks_received)$/ {k=$0; getline; printf "%s=%s ", k, $0}')
		fi
		printf '%-10s rep %d: %s %s %s\n' "$name" "$rep" "${mb:-FAIL}" "$UNIT" "$ctr"
		[ "$mb" = VOID ] || res[$name]+="${mb:-0} "
		# qemu's emulated link stalled for good (benchmarks.md, "Noise
		# control"): every later run would fail; this one is void too
		if grep -aq 'NETDEV WATCHDOG' "$LAB_RUN"/n[12].console 2>/dev/null; then
			echo "# ab: STOPPED after $name rep $rep: the emulated link stalled" \
				"(NETDEV WATCHDOG on a node's console); its medians are of the runs before"
			break 2
		fi
	done
done
for v in "$@"; do
	name=${v%%=*}
	printf '%-10s median %s %s (runs: %s)\n' "$name" \
		"$(tr ' ' '\n' <<<"${res[$name]}" | grep . | sort -g |
			awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')" \
		"$UNIT" "${res[$name]% }"
done
lab_summary
