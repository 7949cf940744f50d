# SPDX-License-Identifier: GPL-2.0
# rsocket file copies for the lab scenarios (consumers-rsocket.sh,
# consumers-quick.sh); sourced after scripts/lab/lab.sh.
#
# librdmacm's librspreload.so (Debian's, unmodified) preloaded under
# selftests/tools/sockcopy.c, a plain TCP socket program that copies a
# file; the copy's sha256 must match. The transfer must not have gone over
# TCP (rspreload falls back to a kernel socket when rdma_cm fails): no TCP
# socket on the port while it runs, an rdma_cm listener on the port in
# `rdma res show cm_id`.
#
#   FROM  LD_PRELOAD=librspreload.so sockcopy send 192.0.2.X PORT FILE
#          ---- rsocket over the device rdma_cm picks for the IP ---->
#   TO    LD_PRELOAD=librspreload.so sockcopy recv PORT OUT

RS_PRE=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so
RS_BIN=$LAB_ROOT/build/consumers/sockcopy
RS_SIZE_MB=${RS_SIZE_MB:-8}
RS_TIMEOUT=${RS_TIMEOUT:-300}	# seconds a copy may take
RS_LISTEN=${RS_LISTEN:-30}	# seconds the receiver may take to listen
RS_FIG=${RS_FIG:-/dev/null}	# figures file: one line per copy
rs_port=7470

# rs_build: compile sockcopy (before lab_start).
rs_build() {
	mkdir -p "${RS_BIN%/*}"
	gcc -O2 -Wall -Werror -o "$RS_BIN" "$LAB_ROOT/selftests/tools/sockcopy.c"
}

# rs_files: checks: a random test file on each node, its sha256 in the
# run directory (/tmp/lab/rs.sum.n1, rs.sum.n2).
rs_files() {
	local node
	for node in n1 n2; do
		check "$node: test file ($RS_SIZE_MB MiB)" "$node" \
			"head -c ${RS_SIZE_MB}M /dev/urandom >/tmp/rs.in && sha256sum </tmp/rs.in >/tmp/lab/rs.sum.$node"
	done
}

# rs_copy DEV NET FROM TO: FROM sends its file to TO over rsocket; 0 if
# the copy arrived whole (sha256), over RDMA, within RS_TIMEOUT.
rs_copy() {
	local dev=$1 net=$2 from=$3 to=$4 ip out rc t0
	rs_port=$((rs_port + 1))
	ip=192.0.2.${to#n}
	lab_bg "$to" rsrecv "LD_PRELOAD=$RS_PRE $RS_BIN recv $rs_port /tmp/rs.out"
	lab_wait_for "$to" "rdma res show cm_id | grep -q 'LISTEN.*:$rs_port ' && sleep 1" "$RS_LISTEN" || {
		echo "no rdma_cm listener on :$rs_port (rsocket fell back to TCP?)"
		lab_run "$to" 'pkill -x sockcopy; true' >/dev/null
		lab_wait rsrecv; return 1; }
	t0=$(date +%s.%N)
	out=$(LAB_CMD_TIMEOUT=$((RS_TIMEOUT + 100)) lab_run "$from" "timeout $RS_TIMEOUT env LD_PRELOAD=$RS_PRE $RS_BIN send $ip $rs_port /tmp/rs.in & p=\$!
		sleep 0.5; ss -tn | grep -q ':$rs_port ' && echo 'TCP connection on :$rs_port'; wait \$p")
	rc=$?
	echo "$out"
	# the receiver must end by itself (EOF) once the sender is done
	lab_run "$to" "for i in \$(seq 100); do pgrep -x sockcopy >/dev/null || exit 0; sleep 0.1; done
		echo 'receiver still running 10 s after the sender ended:'; rdma res show qp -dd | grep -v 'type UD'
		pkill -x sockcopy; exit 1" || rc=1
	lab_wait rsrecv || rc=1
	grep -q 'TCP connection' <<<"$out" && rc=1
	printf '%-5s %-5s %s->%s %s MiB in %.2f s%s\n' "$dev" "$net" "$from" "$to" "$RS_SIZE_MB" \
		"$(bc <<<"$(date +%s.%N) - $t0")" "$([ $rc -eq 0 ] || echo ' FAILED')" >>"$RS_FIG"
	[ $rc -eq 0 ] && lab_run "$to" "sha256sum </tmp/rs.out | cmp - /tmp/lab/rs.sum.$from && rm -f /tmp/rs.out"
}
