#!/bin/bash
# Consumers: rsocket. librdmacm's librspreload.so (Debian's, unmodified)
# preloaded under a plain TCP socket program that copies a file; the copy's
# sha256 must match. Over mrc0, then over the stock rxe (rxe0) instead (one
# device at a time: rdma_cm picks the device by IP and both sit on eth0),
# clean and under netem loss 1% on both nodes, both directions.
#
#   n1  LD_PRELOAD=librspreload.so sockcopy send 192.0.2.2 PORT FILE
#        ---- rsocket over DEV ---->
#   n2  LD_PRELOAD=librspreload.so sockcopy recv PORT OUT
#
# The transfer must not have gone over TCP (rspreload falls back to a
# kernel socket when rdma_cm fails): no TCP socket on the port while it runs,
# an rdma_cm id on the port in `rdma res show cm_id`.
#
# Known failure (2026-12-01, mrc0 only; rxe passes all four): in about half
# the copies the receiver never returns from read(): it sits in
# ibv_get_cq_event (ib_uverbs_event_read) after the sender exited 0 and the
# QP went to ERR; once with all 8 MiB received (no EOF), once 34816 bytes
# short (8353792 of 8388608, under loss 1%) although the sender's writes
# had all completed. Receive completions (rsocket's WRITE_WITH_IMM data and
# its disconnect message) or the flush of the posted receives on ERR do not
# reach the CQ.
# lab: long
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SIZE_MB=${RS_SIZE_MB:-8}
BIN=$LAB_ROOT/build/consumers/sockcopy
mkdir -p "${BIN%/*}"
gcc -O2 -Wall -Werror -x c -o "$BIN" - <<'EOF' || { echo "0 passed, 1 failed"; exit 1; }
/* sockcopy send HOST PORT FILE | recv PORT FILE: a file over one TCP
 * stream, with plain socket calls (what librspreload.so intercepts). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int copy(int in, int out)
{
	static char buf[65536];
	ssize_t n, w, o;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		for (o = 0; o < n; o += w)
			if ((w = write(out, buf + o, n - o)) <= 0)
				return perror("write"), 1;
	return n < 0 ? (perror("read"), 1) : 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int s, c, f, one = 1, rc;

	if (argc == 5 && !strcmp(argv[1], "send")) {
		inet_pton(AF_INET, argv[2], &a.sin_addr);
		a.sin_port = htons(atoi(argv[3]));
		f = open(argv[4], O_RDONLY);
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (f < 0 || s < 0 || connect(s, (void *)&a, sizeof(a)))
			return perror("send"), 1;
		rc = copy(f, s);
		shutdown(s, SHUT_WR);
		/* wait for the receiver's close: all data is in */
		while (read(s, &one, sizeof(one)) > 0)
			;
		close(s);
		return rc;
	}
	if (argc == 4 && !strcmp(argv[1], "recv")) {
		a.sin_port = htons(atoi(argv[2]));
		f = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		s = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (f < 0 || s < 0 || bind(s, (void *)&a, sizeof(a)) || listen(s, 1))
			return perror("recv"), 1;
		c = accept(s, NULL, NULL);
		if (c < 0)
			return perror("accept"), 1;
		rc = copy(c, f);
		close(f);
		close(c);
		close(s);
		return rc;
	}
	fprintf(stderr, "usage: sockcopy send HOST PORT FILE | recv PORT FILE\n");
	return 2;
}
EOF

PRE=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so
lab_start
FIG=$LAB_RUN/figures.txt

# rxe0 is the reference: its runs are recorded (figures, notes), and a
# failure of rxe is a note, not a failed check.
dcheck() {	# DEV DESC CMD...
	local dev=$1 desc=$2 r
	shift 2
	if [ "$dev" = mrc0 ]; then
		check "$desc" "$@"
		return
	fi
	if "$@" >>"$LAB_RUN/reference.log" 2>&1; then r=ok; else r="FAILED (rc $?)"; fi
	echo "# reference (not a check): $desc: $r" | tee -a "$FIG"
}
check "n1: test file ($SIZE_MB MiB)" n1 "head -c ${SIZE_MB}M /dev/urandom >/tmp/rs.in && sha256sum </tmp/rs.in >/tmp/lab/rs.sum"
check "n2: test file ($SIZE_MB MiB)" n2 "head -c ${SIZE_MB}M /dev/urandom >/tmp/rs.in && sha256sum </tmp/rs.in >/tmp/lab/rs.sum2"

port=7470
# rs_copy DEV NET FROM TO: FROM sends its file to TO over rsocket
rs_copy() {
	local dev=$1 net=$2 from=$3 to=$4 ip sum out rc t0
	port=$((port + 1))
	ip=192.0.2.${to#n}
	sum=rs.sum; [ "$from" = n2 ] && sum=rs.sum2
	lab_bg "$to" rsrecv "LD_PRELOAD=$PRE $BIN recv $port /tmp/rs.out"
	lab_wait_for "$to" "rdma res show cm_id | grep -q 'LISTEN.*:$port ' && sleep 1" 30 || {
		echo "no rdma_cm listener on :$port (rsocket fell back to TCP?)"
		lab_wait rsrecv; return 1; }
	t0=$(date +%s.%N)
	out=$(LAB_CMD_TIMEOUT=400 lab_run "$from" "timeout 300 env LD_PRELOAD=$PRE $BIN send $ip $port /tmp/rs.in & p=\$!
		sleep 0.5; ss -tn | grep -q ':$port ' && echo 'TCP connection on :$port'; wait \$p")
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || lab_run "$to" 'pkill -x sockcopy; true' >/dev/null
	lab_wait rsrecv || rc=1
	grep -q 'TCP connection' <<<"$out" && rc=1
	printf '%-5s %-5s %s->%s %s MiB in %.2f s\n' "$dev" "$net" "$from" "$to" "$SIZE_MB" \
		"$(bc <<<"$(date +%s.%N) - $t0")" >>"$FIG"
	[ $rc -eq 0 ] && lab_run "$to" "sha256sum </tmp/rs.out | cmp - /tmp/lab/$sum && rm -f /tmp/rs.out"
}

for dev in mrc0 rxe0; do
	check "n1: $dev added" lab_add_dev n1 $dev
	check "n2: $dev added" lab_add_dev n2 $dev
	for net in clean loss1; do
		if [ $net = loss1 ]; then
			lab_netem n1 loss 1% >/dev/null
			lab_netem n2 loss 1% >/dev/null
		fi
		dcheck $dev "$dev $net: rsocket copy n1 -> n2, sha256 matches" rs_copy $dev $net n1 n2
		dcheck $dev "$dev $net: rsocket copy n2 -> n1, sha256 matches" rs_copy $dev $net n2 n1
		lab_netem_clear
	done
	check "n1: $dev removed" n1 rdma link del $dev
	check "n2: $dev removed" n2 rdma link del $dev
done
echo "# rsocket figures:"
sed 's/^/#   /' "$FIG"
lab_summary
