#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# metaroce benchmark: metaroce vs the stock rxe vs TCP on the same two-node
# qemu link, clean and under netem loss, reordering, duplication and one
# blackholed path. Documentation/benchmarks.md explains how to read it.
#
#        n1 (client)                                n2 (server)
#   +-----------------------+                 +-----------------------+
#   | mrc0 -> eth0  (19791) |   qemu socket   | mrc0 -> eth0  (19791) |
#   | rxe0 -> eth0  (4791)  |<--------------->| rxe0 -> eth0  (4791)  |
#   | iperf3 -c / ib_*  -x G|  netem on BOTH  | iperf3 -s / ib_* srv  |
#   | iptables (blackhole)  |  eth0 egresses  |                       |
#   +-----------------------+                 +-----------------------+
#
# Usage: scripts/bench.sh [--quick] [--conditions LIST] [--reps N]
#                         [--duration S] [--contenders LIST] [--tests LIST]
#                         [--mtu N] [--out DIR] [--publish]
#        scripts/bench.sh --report DIR[,DIR...] [--publish]   (re-make the
#                         outputs; several sittings publish as one page)
#
# Every raw run goes to build/bench/<timestamp>/runs.csv; summary.md and the
# PNG plots are made from it by scripts/bench/report.py. A run that fails or
# times out is recorded with an empty value and its rc; it is never retried
# or replaced by a number.
set -o pipefail

BENCH_ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH_ARGS=("$@")

ALL_CONDITIONS=clean,loss0.1,loss1,loss5,loss10,gemodel,delay2,reorder10,reorder25,dup1,blackhole
QUICK_CONDITIONS=clean,loss1,reorder10
quick=
conditions=
reps=
duration=
contenders=metaroce,rxe,tcp
tests=
out=
publish=
report_only=
lat_iters=
mtu=1500

usage() {
	sed -n '/^# Usage:/,/^# Every raw/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1
	cat <<EOF
Options:
  --quick            1 rep, ${QUICK_CONDITIONS}, write_bw/write_lat 2 B/TCP,
                     4 s runs (a development run, a few minutes)
  --conditions LIST  comma list out of: ${ALL_CONDITIONS} (default: all)
  --reps N           repetitions per contender and condition (default 5)
  --duration S       seconds per bandwidth run (perftest -D, iperf3 -t;
                     default 10, quick 4)
  --contenders LIST  comma list out of metaroce,rxe,tcp (default: all)
  --tests LIST       comma list out of: write_bw,read_bw,send_bw,
                     write_bw_q8 (8 QPs, aggregate), write_rate_64,
                     send_rate_64 (64 B messages, Mpps), write_sweep,
                     write_lat_2, write_lat_4096, send_lat_2,
                     send_lat_4096, read_lat_2, read_lat_4096
                     (default: all but write_sweep only in full mode)
  --lat-iters N      ib_write_lat iterations (default 200, quick 50)
  --mtu N            eth0 MTU on both nodes (default 1500; 9000 = jumbo
                     frames, as RoCE fabrics run: rxe then uses IB MTU
                     4096, metaroce segments to the IP MTU, TCP's MSS grows)
  --out DIR          output directory (default build/bench/<timestamp>)
  --publish          also write the table into Documentation/benchmarks.md
  --report DIR[,DIR...]
                     only re-make summary.md/plots (and --publish) from
                     DIR/runs.csv, no lab; several sittings (say every test
                     clean, write_bw under every condition, --mtu 9000)
                     publish as one page under one targets table
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--conditions) conditions=$2; shift ;;
	--reps) reps=$2; shift ;;
	--duration) duration=$2; shift ;;
	--contenders) contenders=$2; shift ;;
	--tests) tests=$2; shift ;;
	--lat-iters) lat_iters=$2; shift ;;
	--mtu) mtu=$2; shift ;;
	--out) out=$2; shift ;;
	--publish) publish=1 ;;
	--report) report_only=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "bench: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

report() {	# DIR...: summary.md + plots (+ Documentation/benchmarks.md)
	python3 "$BENCH_ROOT/scripts/bench/report.py" "$@" \
		${publish:+--publish "$BENCH_ROOT/Documentation/benchmarks.md"}
}

if [ -n "$report_only" ]; then
	IFS=, read -ra report_dirs <<<"$report_only"
	report "${report_dirs[@]}"
	exit $?
fi

if [ -n "$quick" ]; then
	: "${conditions:=$QUICK_CONDITIONS}" "${reps:=1}" "${duration:=4}"
	: "${tests:=write_bw,write_lat_2}" "${lat_iters:=50}"
else
	: "${conditions:=$ALL_CONDITIONS}" "${reps:=5}" "${duration:=10}"
	: "${tests:=write_bw,read_bw,send_bw,write_bw_q8,write_rate_64,send_rate_64,write_sweep,write_lat_2,write_lat_4096,send_lat_2,send_lat_4096,read_lat_2,read_lat_4096}"
	: "${lat_iters:=200}"
fi
if ! [[ $mtu =~ ^[0-9]+$ ]] || [ "$mtu" -lt 1280 ] || [ "$mtu" -gt 9000 ]; then
	echo "bench: --mtu must be 1280..9000" >&2
	exit 2
fi
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "bench: --reps must be >= 1" >&2; exit 2; }
if ! [[ $duration =~ ^[1-9][0-9]*$ ]] || [ "$duration" -lt 4 ]; then
	echo "bench: --duration must be >= 4 (perftest's -D margins)" >&2
	exit 2
fi

# netem on eth0 egress of BOTH nodes (so data and ACKs see it, both ways).
netem_args() {	# CONDITION -> netem arguments ('' = none)
	case $1 in
	clean|blackhole) echo '' ;;
	loss0.1) echo 'loss 0.1%' ;;
	loss1) echo 'loss 1%' ;;
	loss5) echo 'loss 5%' ;;
	loss10) echo 'loss 10%' ;;
	gemodel) echo 'loss gemodel 1% 10% 70% 0.1%' ;;
	# the reorder conditions' delay alone: their control
	delay2) echo 'delay 2ms' ;;
	reorder10) echo 'delay 2ms reorder 10%' ;;
	reorder25) echo 'delay 2ms reorder 25%' ;;
	dup1) echo 'duplicate 1%' ;;
	*) return 1 ;;
	esac
}
IFS=, read -ra COND_LIST <<<"$conditions"
IFS=, read -ra CONT_LIST <<<"$contenders"
IFS=, read -ra TEST_LIST <<<"$tests"
for c in "${COND_LIST[@]}"; do
	netem_args "$c" >/dev/null || { echo "bench: unknown condition '$c'" >&2; exit 2; }
done
for c in "${CONT_LIST[@]}"; do
	case $c in metaroce|rxe|tcp) ;; *) echo "bench: unknown contender '$c'" >&2; exit 2 ;; esac
done
for t in "${TEST_LIST[@]}"; do
	case $t in
	write_bw|read_bw|send_bw|write_bw_q8|write_rate_64|send_rate_64) ;;
	write_sweep|write_lat_2|write_lat_4096|send_lat_2|send_lat_4096) ;;
	read_lat_2|read_lat_4096) ;;
	*) echo "bench: unknown test '$t'" >&2; exit 2 ;;
	esac
done

OUT=${out:-$BENCH_ROOT/build/bench/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/raw"
OUT=$(cd "$OUT" && pwd)
CSV=$OUT/runs.csv
echo 'condition,contender,test,rep,value,unit,cpu_s,bytes,rc,note' >"$CSV"
# Snapshot the module: other people may rebuild ./metaroce.ko meanwhile.
if [ -f "${LAB_MODULE:-$BENCH_ROOT/metaroce.ko}" ]; then
	cp "${LAB_MODULE:-$BENCH_ROOT/metaroce.ko}" "$OUT/metaroce.ko"
	export LAB_MODULE=$OUT/metaroce.ko
fi
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "command=scripts/bench.sh ${BENCH_ARGS[*]}"
	echo "host=$(uname -n) $(uname -r)"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
	echo "git=$(git -C "$BENCH_ROOT" rev-parse --short HEAD 2>/dev/null || echo none)"
	echo "conditions=$conditions"
	echo "contenders=$contenders"
	echo "tests=$tests"
	echo "reps=$reps"
	echo "duration=$duration"
	echo "lat_iters=$lat_iters"
	echo "mtu=$mtu"
	echo "link=qemu ${LAB_LINK:-stream} netdev"
	echo "perftest=$(dpkg-query -W -f='${Version}' perftest 2>/dev/null)"
	echo "iperf3=$(dpkg-query -W -f='${Version}' iperf3 2>/dev/null)"
} >"$OUT/meta.txt"

LAB_NAME=bench
# shellcheck source=scripts/lab/lab.sh
. "$BENCH_ROOT/scripts/lab/lab.sh"

SRV=192.0.2.2
PORT_SEQ=0
RUN_SEQ=0
declare -A GID=()	# GID["contender node"] = index of the IPv4 GID
declare -A DEV=([metaroce]=mrc0 [rxe]=rxe0)
declare -A USABLE=()	# contender -> 1 if its device came up on both nodes

# next_port: a fresh TCP port per run in $PORT (not $(next_port): a
# subshell's increment is lost; every run used 20001, so a server that a
# timed-out run left behind could make every later run fail)
next_port() { PORT_SEQ=$((PORT_SEQ + 1)); PORT=$((20000 + PORT_SEQ % 20000)); }

# /proc/stat busy jiffies: user+nice+system+irq+softirq of the "cpu" line.
# Printed by the guest wrapper as "@cpu0 N" / "@cpu1 N".
# shellcheck disable=SC2016 # expanded by awk in the guest
STAT_SNIP='awk '\''/^cpu /{print $2+$3+$4+$7+$8; exit}'\'' /proc/stat'

# wrap TIMEOUT PIDFILE CMD: guest shell code that runs CMD under timeout, prints the
# CPU counters around it and "@rc N"; its pid goes to $LAB_OUT/PIDFILE.
wrap() {	# TIMEOUT PIDFILE CMD
	printf '%s\n' "echo \"@cpu0 \$($STAT_SNIP)\"
timeout -k 3 $1 $3 &
p=\$!
echo \$p >\$LAB_OUT/$2
wait \$p
rc=\$?
echo \"@end_at \$(date +%s.%N)\"
echo \"@cpu1 \$($STAT_SNIP)\"
echo \"@rc \$rc\"
exit \$rc"
}

cpu_delta() {	# FILE -> busy jiffies between @cpu0 and @cpu1 ('' if missing)
	awk '/^@cpu0 /{a=$2} /^@cpu1 /{b=$2} END{if (a != "" && b != "") print b-a}' "$1"
}

# csv CONDITION CONTENDER TEST REP VALUE UNIT CPU_S BYTES RC NOTE
csv() {
	local IFS=, a f=()
	for a in "$@"; do
		a=${a//$'\n'/ }
		f+=("${a//,/;}")
	done
	echo "${f[*]}" >>"$CSV"
}

# gid_of NODE DEV: index of the ::ffff:192.0.2.X GID of DEV's port 1
gid_of() {
	local node=$1 dev=$2 ip want
	ip=${node#n}
	printf -v want '0000:0000:0000:0000:0000:ffff:c000:%04x' $((0x0200 + ip))
	lab_run "$node" "cd /sys/class/infiniband/$dev/ports/1/gids &&
for g in \$(ls | sort -n); do
	[ \"\$(cat \$g 2>/dev/null)\" = $want ] && { echo \$g; exit 0; }
done; exit 1" 2>/dev/null | tail -1
}

# kill_bg NODE PIDFILE: stop a wrapped background command early
kill_bg() {
	lab_run "$1" "p=\$(cat \$LAB_OUT/$2 2>/dev/null) && kill \$p 2>/dev/null; true" >/dev/null 2>&1
}

blackhole_clear() {
	lab_run "$1" 'iptables -w -F OUTPUT 2>/dev/null; tc qdisc del dev eth0 clsact 2>/dev/null; true' >/dev/null 2>&1
}

# parse_perftest FILE KIND SIZE: value from perftest's result table
#   bw  -> "BW average[MB/sec]" (MiB/s) of the row for SIZE
#   rate -> "MsgRate[Mpps]" of the row for SIZE
#   lat -> "t_typical[usec]" (perftest's median) of the row for SIZE
#   sweep -> "SIZE MiB/s" for every row
parse_perftest() {
	awk -v kind="$2" -v size="$3" '
	/#bytes/ { hdr = 1; next }
	hdr && $1 ~ /^[0-9]+$/ && NF >= 4 {
		if (kind == "sweep") print $1, $4
		else if ($1 == size) { print (kind == "bw" ? $4 : $5); exit }
	}' "$1"
}

# perftest_error FILE: the first error perftest printed, with the WC status
perftest_error() {
	local st
	st=$(grep -m1 -o 'Failed status [0-9]*' "$1" | awk '{print $3}')
	if [ -n "$st" ]; then
		case $st in
		4) st="$st IBV_WC_LOC_PROT_ERR" ;; 5) st="$st IBV_WC_WR_FLUSH_ERR" ;;
		9) st="$st IBV_WC_REM_INV_REQ_ERR" ;; 10) st="$st IBV_WC_REM_ACCESS_ERR" ;;
		12) st="$st IBV_WC_RETRY_EXC_ERR" ;; 13) st="$st IBV_WC_RNR_RETRY_EXC_ERR" ;;
		esac
		echo "completion status $st"
	else
		grep -m1 -iE 'error|fail|unable|couldn|cannot' "$1" | sed 's/^ *//' | cut -c1-80
	fi
}

# seconds of perftest slack on top of -D (connect, margins), and the limit
# of a run without -D; both grow by LAB_SCALE on the debug kernel (4: a
# KASAN guest under TCG took longer than 45 s to exchange perftest's
# final reports, and the server's limit ended the run)
RDMA_SETUP_T=$((45 * LAB_SCALE))
RDMA_RUN_T=$((120 * LAB_SCALE))

# run_rdma COND CONTENDER TEST REP
run_rdma() {
	local cond=$1 who=$2 test=$3 rep=$4 dev prog size mode port t log
	local gs gc rc rcs value bytes cpu j1 j2 note='' sz v kind unit bh_fail=
	dev=${DEV[$who]}
	case $test in
	write_bw) prog=ib_write_bw size=65536 mode="-D $duration" ;;
	read_bw) prog=ib_read_bw size=65536 mode="-D $duration" ;;
	send_bw) prog=ib_send_bw size=65536 mode="-D $duration" ;;
	write_sweep) prog=ib_write_bw size=all mode="-a -n 50" ;;
	write_bw_q8) prog=ib_write_bw size=65536 mode="-D $duration -q 8" ;;
	write_rate_64) prog=ib_write_bw size=64 mode="-D $duration" ;;
	send_rate_64) prog=ib_send_bw size=64 mode="-D $duration" ;;
	*_lat_*) prog=ib_${test%%_*}_lat size=${test##*_} mode="-n $lat_iters" ;;
	esac
	[ "$size" = all ] || mode="$mode -s $size"
	next_port
	port=$PORT
	RUN_SEQ=$((RUN_SEQ + 1))
	log=$(printf '%s/raw/%04d-%s-%s-%s-%d' "$OUT" "$RUN_SEQ" "$cond" "$who" "$test" "$rep")
	CUR_LOG=$log.note
	: >"$CUR_LOG"
	case $mode in
	-D*) t=$((duration + RDMA_SETUP_T)) ;;
	-a*) t=$((600 * LAB_SCALE)) ;;
	*) t=$RDMA_RUN_T ;;
	esac
	gs=${GID[$who n2]} gc=${GID[$who n1]}
	LAB_CMD_TIMEOUT=$((t + 20)) lab_bg n2 srv \
		"$(wrap $((t + 10)) srv.pid "$prog -d $dev -x $gs -F $mode -p $port")"
	if ! lab_wait_for n2 "ss -ltn | grep -q :$port" 30 >>"$CUR_LOG" 2>&1; then
		note='server did not listen'
	fi
	if [ "$cond" = blackhole ]; then
		# scripts/bench/blackhole.py drops the busiest path a third of
		# the way into the run (see its header)
		LAB_CMD_TIMEOUT=$((t + 10)) lab_bg n1 bh \
			"rm -f \$LAB_OUT/bh.ready; python3 \$MRC_ROOT/scripts/bench/blackhole.py \$LAB_OUT/bh.ready --delay $((duration / 3)) --wait $((t - 5))"
		# shellcheck disable=SC2016 # $LAB_OUT of the guest
		lab_wait_for n1 'test -e $LAB_OUT/bh.ready' 60 >>"$CUR_LOG" 2>&1
		LAB_CMD_TIMEOUT=$((t + 10)) lab_run n1 \
			"$(wrap "$t" cli.pid "$prog -d $dev -x $gc -F $mode -p $port $SRV")" \
			>"$log.cli" 2>&1
		rc=$?
		# the run did not see the condition: not a blackhole number
		if ! lab_wait bh >"$log.bh" 2>&1; then
			bh_fail="blackhole not applied: $(tail -n 1 "$log.bh")"
		elif ! awk '/^@drop_at /{d=$2} /^@end_at /{e=$2}
			END{exit !(d != "" && e != "" && d < e - 1)}' "$log.bh" "$log.cli"; then
			bh_fail="blackhole not applied: the drop came after the run ended"
		fi
		[ -n "$bh_fail$note" ] || note=$(awk '/^drop /{d=$2" via "$4" "$5} /^before /{b=NF-2} /^after /{a=$0} END{printf "dropped sport %s (%d ports seen); %s", d, b, a}' "$log.bh")
		blackhole_clear n1
	else
		LAB_CMD_TIMEOUT=$((t + 10)) lab_run n1 \
			"$(wrap "$t" cli.pid "$prog -d $dev -x $gc -F $mode -p $port $SRV")" \
			>"$log.cli" 2>&1
		rc=$?
	fi
	[ "$rc" -eq 0 ] || kill_bg n2 srv.pid
	lab_wait srv >"$log.srv" 2>&1
	rcs=$?
	j1=$(cpu_delta "$log.cli") j2=$(cpu_delta "$log.srv")
	cpu=
	[ -n "$j1" ] && [ -n "$j2" ] && cpu=$(awk -v a="$j1" -v b="$j2" 'BEGIN{printf "%.2f", (a+b)/100}')
	[ "$rc" -eq 124 ] && note="${note:+$note; }timeout ${t}s"
	[ "$rc" -eq 0 ] && [ "$rcs" -ne 0 ] && note="${note:+$note; }server rc $rcs"
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && note="${note:+$note; }$(perftest_error "$log.cli")"
	if [ "$test" = write_sweep ]; then
		value=
		while read -r sz v; do
			[ -n "$sz" ] || continue
			csv "$cond" "$who" "write_bw_$sz" "$rep" "$v" MiB/s "" "" "$rc" "sweep"
			value=$v
		done < <([ "$rc" -eq 0 ] && parse_perftest "$log.cli" sweep)
		[ -n "$value" ] || csv "$cond" "$who" write_sweep "$rep" "" MiB/s "$cpu" "" "$rc" "${note:-no result}"
		printf '  %-9s %-10s %-14s rep %d: %s rc=%s\n' "$cond" "$who" "$test" "$rep" \
			"${value:+done}" "$rc"
		return
	fi
	value=
	kind=bw
	[[ $test == *_lat_* ]] && kind=lat
	[[ $test == *_rate_* ]] && kind=rate
	[ "$rc" -eq 0 ] && value=$(parse_perftest "$log.cli" "$kind" "$size")
	case $test in
	*_lat_*) unit=usec bytes=$((lat_iters * size * 2)) ;;
	*_rate_*) unit=Mpps bytes=
		[ -n "$value" ] && bytes=$(awk -v v="$value" -v d="$duration" -v s="$size" 'BEGIN{printf "%.0f", v*1e6*s*d}') ;;
	*) unit=MiB/s bytes=
		[ -n "$value" ] && bytes=$(awk -v v="$value" -v d="$duration" 'BEGIN{printf "%.0f", v*1048576*d}') ;;
	esac
	[ "$rc" -eq 0 ] && [ -z "$value" ] && note="${note:+$note; }no result line"
	# perftest's CPU-MHz calibration fails on a starved vCPU ("Correlation
	# coefficient r^2 < 0.9"): it then prints every figure as 0.00, rc 0.
	if grep -q 'Correlation coefficient r^2' "$log.cli" 2>/dev/null; then
		value='' note="${note:+$note; }void: perftest clock calibration failed (r^2 < 0.9)"
	fi
	[ -n "$bh_fail" ] && value='' note="${note:+$note; }$bh_fail"
	csv "$cond" "$who" "$test" "$rep" "$value" "$unit" "$cpu" "$bytes" "$rc" "$note"
	printf '  %-9s %-10s %-14s rep %d: %s %s rc=%s cpu=%ss%s\n' "$cond" "$who" "$test" "$rep" \
		"${value:-FAILED}" "$unit" "$rc" "${cpu:-?}" "${note:+ ($note)}"
}

# run_tcp COND REP: iperf3 single stream n1 -> n2
run_tcp() {
	local cond=$1 rep=$2 port t log rc rcs j1 j2 cpu value bytes note=''
	next_port
	port=$PORT
	RUN_SEQ=$((RUN_SEQ + 1))
	log=$(printf '%s/raw/%04d-%s-tcp-iperf3-%d' "$OUT" "$RUN_SEQ" "$cond" "$rep")
	CUR_LOG=$log.note
	t=$((duration + 30 * LAB_SCALE))
	LAB_CMD_TIMEOUT=$((t + 20)) lab_bg n2 srv "$(wrap $((t + 10)) srv.pid "iperf3 -s -1 -p $port")"
	lab_wait_for n2 "ss -ltn | grep -q :$port" 30 >>"$CUR_LOG" 2>&1 ||
		note='server did not listen'
	LAB_CMD_TIMEOUT=$((t + 10)) lab_run n1 \
		"$(wrap "$t" cli.pid "iperf3 -c $SRV -p $port -t $duration -J")" >"$log.cli" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || kill_bg n2 srv.pid
	lab_wait srv >"$log.srv" 2>&1
	rcs=$?
	j1=$(cpu_delta "$log.cli") j2=$(cpu_delta "$log.srv")
	cpu=
	[ -n "$j1" ] && [ -n "$j2" ] && cpu=$(awk -v a="$j1" -v b="$j2" 'BEGIN{printf "%.2f", (a+b)/100}')
	read -r value bytes < <(python3 - "$log.cli" <<'PY'
import json, sys
txt = open(sys.argv[1]).read()
try:
    j = json.loads(txt[txt.index("{"):txt.rindex("}") + 1])
    r = j["end"]["sum_received"]
    print("%.2f %d" % (r["bits_per_second"] / 8 / 1048576, r["bytes"]))
except Exception:
    print("")
PY
	)
	[ "$rc" -eq 0 ] || value='' bytes=
	[ "$rc" -eq 124 ] && note="${note:+$note; }timeout ${t}s"
	csv "$cond" tcp tcp_stream "$rep" "$value" MiB/s "$cpu" "$bytes" "$rc" "$note"
	printf '  %-9s %-10s %-14s rep %d: %s MiB/s rc=%s cpu=%ss%s\n' "$cond" tcp tcp_stream "$rep" \
		"${value:-FAILED}" "$rc" "${cpu:-?}" "${note:+ ($note)}"
}

# link_stalled: print the first "NETDEV WATCHDOG" line of either guest's
# console and succeed if there is one: qemu's emulated link stopped taking
# frames from that guest for good (benchmarks.md, "The emulated link can
# stall"), so every later run would fail
link_stalled() {
	local n l
	for n in n1 n2; do
		l=$(grep -a -m1 'NETDEV WATCHDOG' "$LAB_RUN/$n.console" 2>/dev/null) || continue
		echo "$n: ${l//$'\r'/}"
		return 0
	done
	return 1
}

# run_contender COND CONTENDER REP: every selected test of CONTENDER
run_contender() {
	local cond=$1 who=$2 rep=$3 test
	if [ "$who" = tcp ]; then
		[ "$cond" = blackhole ] || run_tcp "$cond" "$rep"
		return
	fi
	# the blackhole is a metaroce multipath condition: rxe has one path
	[ "$cond" = blackhole ] && [ "$who" != metaroce ] && return
	for test in "${TEST_LIST[@]}"; do
		[ "$cond" = blackhole ] && [[ $test != *_bw ]] && continue
		[ "$test" = write_sweep ] && [ "$cond" != clean ] && continue
		if [ -z "${USABLE[$who]:-}" ]; then
			csv "$cond" "$who" "$test" "$rep" "" "" "" "" "" "device not available"
			continue
		fi
		run_rdma "$cond" "$who" "$test" "$rep"
	done
}

lab_start
echo "# bench: output in ${OUT#"$BENCH_ROOT"/}"
for n in n1 n2; do
	echo "guest_$n=$(lab_run $n 'uname -r; nproc; grep MemTotal /proc/meminfo' | tr '\n' ' ')" >>"$OUT/meta.txt"
done
for n in n1 n2; do
	check "$n: eth0 MTU $mtu" lab_run $n "ip link set eth0 mtu $mtu"
done
for who in "${CONT_LIST[@]}"; do
	[ "$who" = tcp ] && continue
	ok=1
	for n in n1 n2; do
		check "$n: ${DEV[$who]} on eth0" lab_add_dev $n "${DEV[$who]}" || ok=
		[ -n "$ok" ] || break
		GID[$who $n]=$(gid_of $n "${DEV[$who]}")
		check "$n: ${DEV[$who]} has an IPv4 GID (index ${GID[$who $n]:-none})" \
			test -n "${GID[$who $n]}" || ok=
		echo "gid_${who}_$n=${GID[$who $n]}" >>"$OUT/meta.txt"
	done
	[ -n "$ok" ] && USABLE[$who]=1
done
# The first iptables call in a guest loads nf_tables & co (seconds under
# TCG): do it now, not in the middle of a blackhole run.
if [[ ,$conditions, == *,blackhole,* ]]; then
	check "n1: iptables DROP rule can be added and removed" lab_run n1 \
		'iptables -w -I OUTPUT -p udp --dport 19791 --sport 1 -j DROP &&
		 iptables -w -D OUTPUT -p udp --dport 19791 --sport 1 -j DROP'
fi

stall=
for cond in "${COND_LIST[@]}"; do
	args=$(netem_args "$cond")
	echo "# condition $cond: ${args:-no netem}${args:+ (netem on n1 and n2 eth0)}"
	lab_netem_clear n1 n2 >/dev/null 2>&1
	if [ -n "$args" ]; then
		for n in n1 n2; do
			# shellcheck disable=SC2086
			lab_netem $n $args >/dev/null ||
				echo "# WARNING: netem '$args' failed on $n"
		done
	fi
	for rep in $(seq "$reps"); do
		for who in "${CONT_LIST[@]}"; do
			run_contender "$cond" "$who" "$rep"
			stall=$(link_stalled) || continue
			echo "# bench: STOPPED: the emulated link stalled during $cond $who rep $rep:" \
				"$stall (benchmarks.md, 'The emulated link can stall'); every later run" \
				"would fail, so the sitting ends here and reports the runs it has"
			echo "link_stall=$cond $who rep $rep: $stall" >>"$OUT/meta.txt"
			break 3
		done
	done
done
lab_netem_clear n1 n2 >/dev/null 2>&1

[ -z "$stall" ] || check "the emulated link did not stall (n1/n2 console: NETDEV WATCHDOG)" false
lab_summary
echo "# bench: raw runs in ${CSV#"$BENCH_ROOT"/}"
report "$OUT"
rc=$?
ln -sfn "$(basename "$OUT")" "$(dirname "$OUT")/last" 2>/dev/null
exit $rc
