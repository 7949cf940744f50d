#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# badinput: abuse of metaroce's uverbs interface (selftests/verbs/badinput.c)
# on one node of the qemu lab (n2 just idles):
#
#   n1: mrc0 on eth0 (192.0.2.1) -- badinput: absurd sizes, bad handles,
#       bad modify_qp, bad MRs, mmap with wrong offsets, garbage in the
#       mmap'd SQ + doorbell, then a loopback RC transfer; then the ring
#       cases, one process each: SQ/RQ/SRQ producer indices beyond the
#       ring or behind it, and chased by a second thread during a flush;
#       a UD receive WQE rewritten with too many SGEs, then a datagram;
#       a full SQ flushed by a QP in ERR (a kprobe on metaroce_mr_get
#       counts the local key lookups of the flush: there must be none)
#
# Every case must end in an error code, an error completion or the QP/SRQ
# in ERR with its async event (checked by the program), the kernel log
# must stay clean (lab_stop: a soft lockup fails it) and, once the program
# has exited, `rdma res` must be back where it started (nothing leaked).
# A ring case that makes the kernel spin does not return: each runs under
# its own timeout. LAB_MODULE may point at another metaroce.ko.
# Two vCPUs per node: the "hammer" ring cases need a second thread that
# runs while the kernel flushes.
: "${LAB_SMP:=2}"
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$ROOT/build/verbs"
gcc -Wall -Wextra -Wno-missing-field-initializers -O2 -I"$ROOT/include/uapi" \
	-o "$ROOT/build/verbs/badinput" "$ROOT/selftests/verbs/badinput.c" \
	-libverbs -lpthread || lab_fatal "cannot build badinput.c"

res() {	# the resource summary of n1's mrc0
	n1 'rdma res show | grep " mrc0:"'
}

lab_start
check "n1: metaroce loaded, mrc0 on eth0" lab_load_metaroce n1
check "n1: resource baseline (rdma res)" eval 'BASE=$(res) && echo "$BASE"'
LAB_CMD_TIMEOUT=240 check "n1: badinput: every abuse refused or failed, process goes on" \
	n1 "$ROOT/build/verbs/badinput mrc0 base"
check "n1: kprobe mrget on metaroce_mr_get (counted by sq-flush-keys)" n1 \
	'T=/sys/kernel/tracing; mountpoint -q $T || mount -t tracefs tracefs $T
	 echo "p:mrc/mrget metaroce_mr_get" >> $T/kprobe_events &&
	 echo 1 > $T/events/mrc/mrget/enable && grep -w mrget $T/kprobe_profile'
# the ring cases (selftests/verbs/badinput.c ring_cases[]), 60 s each
for c in sq-over sq-wrap sq-behind srq-over sq-hammer rq-hammer rq-modify rq-rx \
	ud-rq-sge sq-flush-keys; do
	LAB_CMD_TIMEOUT=60 check "n1: badinput ring case $c" \
		n1 "timeout -s KILL 50 $ROOT/build/verbs/badinput mrc0 $c"
done
LAB_CMD_TIMEOUT=240 check "n1: badinput again (same answers the second time)" \
	n1 "$ROOT/build/verbs/badinput mrc0 all >/dev/null"
check "n1: kprobe mrget removed" n1 \
	'T=/sys/kernel/tracing; echo 0 > $T/events/mrc/mrget/enable &&
	 echo "-:mrc/mrget" >> $T/kprobe_events'
check "n1: nothing leaked (rdma res as before)" \
	eval 'NOW=$(res); echo "before: $BASE"; echo "after:  $NOW"; [ -n "$BASE" ] && [ "$NOW" = "$BASE" ]'
check "n1: no QP/CQ/MR left but the kernel's" \
	n1 '! rdma res show mr | grep -q "mrc0" && ! rdma res show qp | grep mrc0 | grep -vq "type GSI"'
check "n1: device still works (ibv_devinfo)" n1 'ibv_devinfo -d mrc0 | grep -q PORT_ACTIVE'
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
check "n1: rmmod metaroce" n1 rmmod metaroce
lab_summary
