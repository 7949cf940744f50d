#!/bin/bash
# Consumers: Open MPI over UCX (Debian's openmpi-bin 4.1 and libucx0 1.13,
# unmodified): mpirun across both nodes, pml ucx on DEV (UCX_NET_DEVICES=
# DEV:1, UCX_TLS=rc: RC verbs, wired up over UD), over mrc0 and then over the
# stock rxe (rxe0) instead, clean and under netem loss 1% on both eth0.
# The MPI program (built here with mpicc) does a point-to-point ping-pong
# (latency, bandwidth; every received byte checked) and an allreduce
# (result checked); it prints its figures.
#
#   n1  mpirun -H 192.0.2.1,192.0.2.2 -np 2 ... mpi_check
#       (mpirun starts n2's orted through a busybox nc shell on n2:2222:
#        the lab has no ssh; its OOB runs over TCP on eth0)
# lab: long
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

OUT=$LAB_ROOT/build/consumers
mkdir -p "$OUT"
mpicc -O2 -Wall -Werror -x c -o "$OUT/mpi_check" - <<'EOF' || { echo "0 passed, 1 failed"; exit 1; }
/* ping-pong latency and bandwidth with payload checks, allreduce check */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fill_check(unsigned char *b, int n, int seed, int check)
{
	for (int i = 0; i < n; i++) {
		unsigned char v = (unsigned char)(i * 31 + seed * 7 + (i >> 8));
		if (check && b[i] != v)
			return 1;
		b[i] = v;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rank, size, bad = 0, sizes[] = { 8, 4096, 65536, 1 << 20 };
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	unsigned char *buf = malloc(1 << 20);
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s], iters = n >= 65536 ? 20 : 200;
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++) {
			if (rank == 0) {
				fill_check(buf, n, i, 0);
				MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(buf, n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				bad |= fill_check(buf, n, i + 1, 1);
			} else if (rank == 1) {
				MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				bad |= fill_check(buf, n, i, 1);
				fill_check(buf, n, i + 1, 0);
				MPI_Send(buf, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
			}
		}
		double t = MPI_Wtime() - t0;
		if (rank == 0)
			printf("pingpong %8d B x %3d: latency %.1f us, bandwidth %.2f MB/s\n",
			       n, iters, t / iters / 2 * 1e6, 2.0 * n * iters / t / 1e6);
	}
	long v[1024], r[1024];
	for (int i = 0; i < 1024; i++)
		v[i] = (long)(rank + 1) * i;
	MPI_Allreduce(v, r, 1024, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < 1024; i++)
		if (r[i] != (long)size * (size + 1) / 2 * i)
			bad = 1;
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("allreduce 1024 longs: %s; payload checks: %s\n",
		       bad ? "BAD" : "ok", bad ? "BAD" : "ok");
	free(buf);
	MPI_Finalize();
	return bad;
}
EOF
cat >"$OUT/mpi_rsh" <<'EOF'
#!/bin/bash
# Open MPI's plm_rsh_agent in the lab: "mpi_rsh HOST CMD...": CMD on HOST
# through the busybox nc shell that consumers-mpi.sh starts on HOST:2222.
# nc's stdin stays open while nc ($$, after the exec) lives.
host=$1
shift
exec busybox nc "$host" 2222 < <(printf '%s\nexit\n' "$*"
	while kill -0 $$ 2>/dev/null; do sleep 1; done)
EOF
chmod +x "$OUT/mpi_rsh"

lab_start
FIG=$LAB_RUN/figures.txt

# mpi_rsh feeds nc through a process substitution (/dev/fd/N): the guests'
# devtmpfs has no /dev/fd (udev would make it)
check "n1: /dev/fd" n1 '[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd'
lab_bg n2 rshd busybox nc -ll -p 2222 -e /bin/sh
check "n2: nc shell on :2222" lab_wait_for n2 'ss -ltn | grep -q :2222' 30

mpi_run() {	# DEV NET
	local out rc
	out=$(LAB_CMD_TIMEOUT=400 n1 "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 300 mpirun -H 192.0.2.1,192.0.2.2 -np 2 \
	--mca plm_rsh_agent $OUT/mpi_rsh --mca plm_rsh_no_tree_spawn 1 \
	--mca oob_tcp_if_include eth0 --mca btl self --mca pml ucx --mca osc ^ucx \
	-x UCX_NET_DEVICES=$1:1 -x UCX_TLS=rc,self -x UCX_WARN_UNUSED_ENV_VARS=n \
	-x PATH -x HOME $OUT/mpi_check")
	rc=$?
	echo "$out"
	grep -E '^(pingpong|allreduce)' <<<"$out" | sed "s/^/$1 $2 /" >>"$FIG"
	[ $rc -eq 0 ] && grep -q 'payload checks: ok' <<<"$out"
}

for dev in mrc0 rxe0; do
	check "n1: $dev added" lab_add_dev n1 $dev
	check "n2: $dev added" lab_add_dev n2 $dev
	check "n1: ucx_info sees $dev:1 (rc_verbs, ud_verbs)" \
		n1 "ucx_info -d | grep -A1 'Transport: \(rc_verbs\|ud_verbs\)' | grep -c 'Device: $dev:1' | grep -qx 2"
	for net in clean loss1; do
		if [ $net = loss1 ]; then
			lab_netem n1 loss 1% >/dev/null
			lab_netem n2 loss 1% >/dev/null
		fi
		lab_dcheck $dev "$dev $net: mpirun pml ucx (rc) ping-pong + allreduce, checked" mpi_run $dev $net
		n1 'pkill -x mpirun; true' >/dev/null
		n2 'pkill -x orted; pkill -x mpi_check; true' >/dev/null
		lab_netem_clear
	done
	check "n1: $dev removed" n1 rdma link del $dev
	check "n2: $dev removed" n2 rdma link del $dev
done
n2 'pkill -f "nc -ll -p 2222"; true' >/dev/null
lab_wait rshd >/dev/null
echo "# Open MPI/UCX figures:"
sed 's/^/#   /' "$FIG"
lab_summary
