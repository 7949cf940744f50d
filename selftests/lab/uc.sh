#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# uc: unreliable connected QPs (IBV_QPT_UC; protocol.rst "Unreliable
# connected (UC)"), selftests/verbs/uc.c:
#  - loopback on n1's mrc0: create/modify with the UC masks, SEND,
#    SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM (0 B .. 64 KiB) byte
#    exact, READ/atomics/SEND_WITH_INV refused, drops without a receive
#    WQE / with a bad rkey / without REMOTE_WRITE (counted, QP lives);
#  - n1 -> n2 over mrc0: 300 messages (SEND_WITH_IMM and
#    RDMA_WRITE_WITH_IMM, 1 B .. 9 KiB, paced 2 ms apart: UC has no flow
#    control), what arrives is byte exact and every message accounted for;
#  - the same under `netem loss 1%` on both nodes: every send WQE
#    completes successfully, every completed message is exact, received +
#    uc_msg_drops account exactly for every message up to the last one
#    received (5 one-byte sentinels follow the messages), no
#    hang;
#  - reference (does not fail the run): the loopback part on rxe0 (n2).
#
#   n1: mrc0 (uc client, sender)  <---- eth0 ---->  n2: mrc0 (uc server)
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/verbs/uc
N=${UC_N:-300}
mkdir -p "$ROOT/build/verbs"
gcc -Wall -Wextra -Wno-missing-field-initializers -O2 -o "$BIN" \
	"$ROOT/selftests/verbs/uc.c" -libverbs || lab_fatal "cannot build uc.c"

# pair TAG [-L]: server on n2, client on n1, N messages
pair() {
	local tag=$1
	shift
	lab_bg n2 "uc-srv-$tag" "$BIN" -n "$N" "$@" mrc0
	check "n1: uc client $tag ($N messages)" n1 "$BIN" -n "$N" "$@" mrc0 192.0.2.2
	check "n2: uc server $tag" lab_wait "uc-srv-$tag"
}

lab_start
check "n1: metaroce loaded, mrc0 on eth0" lab_add_dev n1 mrc0
check "n2: metaroce loaded, mrc0 on eth0" lab_add_dev n2 mrc0
check "n1: uc loopback mrc0" n1 "$BIN" mrc0
pair clean
lab_netem n1 loss 1% >/dev/null
lab_netem n2 loss 1% >/dev/null
pair lossy -L
lab_netem_clear
check "n1: statistic uc_msg_drops readable" n1 'rdma statistic show link mrc0/1 | grep -o "uc_msg_drops [0-9]*"'
if [ "${UC_RXE:-1}" = 1 ]; then
	lab_run n2 rdma link delete mrc0 >/dev/null
	if lab_add_dev n2 rxe0 >/dev/null; then
		echo "# reference: uc -R rxe0 (loopback) on n2"
		lab_run n2 "$BIN" -R rxe0 | sed 's/^/# rxe0: /'
		lab_run n2 rdma link delete rxe0 >/dev/null
	else
		echo "# n2: rxe0 did not load"
	fi
fi
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
lab_summary
