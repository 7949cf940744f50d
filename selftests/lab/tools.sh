#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools: every stock verbs / rdma_cm tool of Debian against metaroce,
# unmodified: the librdmacm examples (kernel CM over the GSI QP1: REQ/REP/
# RTU, SIDR for UD), the libibverbs examples and perftest with and without
# rdma_cm (-R). Each check runs the server on n2 first, waits for it to
# listen, runs the client on n1 and requires both to exit 0.
#
#        n1 (clients)                              n2 (servers)
#   +---------------------+   metaroce/UDP     +---------------------+
#   | mrc0 -> eth0        |   QP1 (CM MADs)    | mrc0 -> eth0        |
#   | 192.0.2.1/24        |<------------------>| 192.0.2.2/24        |
#   | rping -c, udaddy -s,|   data QPs         | rping -s, udaddy,   |
#   | ib_*_bw/lat <srv>   |   qemu socket      | ib_*_bw/lat (listen)|
#   +---------------------+                    +---------------------+
#
# Sizes: perftest without -R runs -a (2 B .. 8 MiB) for ib_write_bw and
# ib_read_bw and fixed sizes for the rest (TCG is slow; CI runs this).
# rping runs 500 exchanges by default (TOOLS_RPING_COUNT=1000 for more).
# Knobs: TOOLS_ONLY=REGEX runs only the checks whose description matches;
# TOOLS_RPING_COUNT; TOOLS_SRV_TIMEOUT / TOOLS_CLI_TIMEOUT (s, default 240).
# lab: long (see scripts/test.sh)
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SRV=192.0.2.2
SRV6=fd00:6d72::2
# rping exchanges (each one is 6 operations, ~0.15 s under TCG)
RPING_COUNT=${TOOLS_RPING_COUNT:-500}
# perftest over the out-of-band TCP exchange (IPv4 GID) and over rdma_cm
PT="-d mrc0 -x 1 -F --report_gbits"
PTR="-d mrc0 -R -F --report_gbits"
# an rdma_cm listener on n2 (any device, any address) at port $1
# rdma_listen() sets LISTEN (what `rdma res` shows) before it registers
# the listen with the CM: a REQ in that window is rejected (reason 8,
# invalid service ID) and perftest then crashes in librdmacm. Settle 1 s.
cm_listening() {
	echo "rdma res show cm_id | grep -q 'LISTEN.*:$1 ' && sleep 1"
}
tcp_listening() {
	echo "ss -ltn | grep -q ':$1 '"
}

# pair 'LISTEN-COND' 'SERVER' 'CLIENT' [LABEL]: SERVER (shell code) in the
# background on n2, CLIENT on n1 once COND holds on n2; both must exit 0.
# A server left waiting by a failed client is killed, so the next check
# finds its port free. With LABEL, the client's perftest result lines go
# to the run's results.txt (printed at the end).
pair() {
	local cond=$1 srv=$2 cli=$3 label=$4 rc src out
	LAB_CMD_TIMEOUT=${TOOLS_SRV_TIMEOUT:-240} lab_bg n2 srv "$srv"
	if ! lab_wait_for n2 "$cond" 30; then
		n2 "kill \$(pidof ${srv%% *}) 2>/dev/null"
		lab_wait srv
		return 1
	fi
	out=$(LAB_CMD_TIMEOUT=${TOOLS_CLI_TIMEOUT:-240} n1 "$cli")
	rc=$?
	printf '%s\n' "$out"
	echo "client rc=$rc"
	if [ -n "$label" ]; then
		printf '%s\n' "$out" | grep -E '^ *[0-9]+ +[0-9]+ ' |
			sed "s/^/$label: /" >>"$LAB_RUN/results.txt"
	fi
	if [ $rc -ne 0 ]; then
		sleep 1
		n2 "kill \$(pidof ${srv%% *}) 2>/dev/null"
	fi
	echo "---- server ----"
	lab_wait srv
	src=$?
	echo "server rc=$src"
	[ $rc -eq 0 ] && [ $src -eq 0 ]
}

# perftest over TCP: perf TOOL ARGS...
perf() {
	local tool=$1
	shift
	pair "$(tcp_listening 18515)" "$tool $PT $*" "$tool $PT $* $SRV" \
		"$tool $*"
}

# perftest over rdma_cm: perf_cm TOOL ARGS...
perf_cm() {
	local tool=$1
	shift
	pair "$(cm_listening 18515)" "$tool $PTR $*" "$tool $PTR $* $SRV" \
		"$tool -R $*"
}

# libibverbs example: pp TOOL ARGS... (payload checked with -c)
pp() {
	local tool=$1
	shift
	pair "$(tcp_listening 18515)" "$tool -d mrc0 -g 1 -c $*" \
		"$tool -d mrc0 -g 1 -c $* $SRV"
}

tcheck() {	# check, filtered by TOOLS_ONLY
	if [ -n "$TOOLS_ONLY" ] && ! [[ $1 =~ $TOOLS_ONLY ]]; then
		return 0
	fi
	check "$@"
}

lab_start

for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
done

# ---- rdma_cm (kernel CM over QP1) ----
tcheck "rdma_cm: rping x$RPING_COUNT, data validated (-V)" \
	pair "$(cm_listening 7174)" "rping -s -V -C $RPING_COUNT -a 0.0.0.0" \
	"rping -c -V -C $RPING_COUNT -a $SRV"
tcheck "rdma_cm: rping x20 over IPv6 (IPv6 GRH on QP1)" \
	pair "$(cm_listening 7174)" "rping -s -V -C 20 -a ::" \
	"rping -c -V -C 20 -a $SRV6"
tcheck "rdma_cm: udaddy (UD QPs, SIDR, AH from wc)" \
	pair "$(cm_listening 7174)" "udaddy" "udaddy -s $SRV"
tcheck "rdma_cm: rdma_server / rdma_client" \
	pair "$(cm_listening 7471)" "rdma_server" "rdma_client -s $SRV"
tcheck "rdma_cm: ucmatose" \
	pair "$(cm_listening 7471)" "ucmatose" "ucmatose -s $SRV"
tcheck "rdma_cm: ib_write_bw -R 64 KiB" perf_cm ib_write_bw -s 65536 -n 50
tcheck "rdma_cm: ib_read_bw -R 64 KiB" perf_cm ib_read_bw -s 65536 -n 50
tcheck "rdma_cm: ib_send_bw -R 64 KiB" perf_cm ib_send_bw -s 65536 -n 50
tcheck "rdma_cm: ib_atomic_bw -R" perf_cm ib_atomic_bw -n 100
tcheck "rdma_cm: ib_write_lat -R 4 KiB" perf_cm ib_write_lat -s 4096 -n 50
tcheck "rdma_cm: ib_read_lat -R 2 B" perf_cm ib_read_lat -s 2 -n 50
tcheck "rdma_cm: ib_send_lat -R 2 B" perf_cm ib_send_lat -s 2 -n 50

# ---- libibverbs examples (-g 1: IPv4 GID; -c: payload checked) ----
tcheck "ibv_rc_pingpong 4 KiB" pp ibv_rc_pingpong -n 50 -s 4096
tcheck "ibv_rc_pingpong -e (completion channel, req_notify)" \
	pp ibv_rc_pingpong -e -n 50 -s 4096
tcheck "ibv_ud_pingpong 1 KiB" pp ibv_ud_pingpong -n 50 -s 1024
tcheck "ibv_ud_pingpong -e" pp ibv_ud_pingpong -e -n 50 -s 1024
tcheck "ibv_srq_pingpong 4 QPs" pp ibv_srq_pingpong -n 20 -s 4096 -q 4
tcheck "ibv_uc_pingpong 1 KiB (UC)" pp ibv_uc_pingpong -n 50 -s 1024

# ---- perftest, out-of-band TCP exchange, IPv4 GID (-x 1) ----
tcheck "ib_write_bw -a (2 B .. 8 MiB)" perf ib_write_bw -a -n 5
tcheck "ib_read_bw -a (2 B .. 8 MiB)" perf ib_read_bw -a -n 5
tcheck "ib_send_bw 64 KiB" perf ib_send_bw -s 65536 -n 100
tcheck "ib_atomic_bw" perf ib_atomic_bw -n 200
tcheck "ib_write_lat 4 KiB" perf ib_write_lat -s 4096 -n 100
tcheck "ib_read_lat 4 KiB" perf ib_read_lat -s 4096 -n 100
tcheck "ib_send_lat 4 KiB" perf ib_send_lat -s 4096 -n 100

check "n1: metaroce.ko unloads" n1 'rdma link del mrc0 && rmmod metaroce'
check "n2: metaroce.ko unloads" n2 'rdma link del mrc0 && rmmod metaroce'

if [ -s "$LAB_RUN/results.txt" ]; then
	echo "# perftest results (client side; bw in Gb/s, lat in usec)"
	sed 's/^/# /' "$LAB_RUN/results.txt"
fi
lab_summary
