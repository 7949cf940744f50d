#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# badinput: abuse of metaroce's uverbs interface (selftests/verbs/badinput.c)
# on one node of the qemu lab (n2 just idles):
#
#   n1: mrc0 on eth0 (192.0.2.1) -- badinput: absurd sizes, bad handles,
#       bad modify_qp, bad MRs, mmap with wrong offsets, garbage in the
#       mmap'd SQ + doorbell, then a loopback RC transfer
#
# Every case must end in an error code or an error completion (checked by
# the program), the kernel log must stay clean (lab_stop) and, once the
# program has exited, `rdma res` must be back where it started (nothing
# leaked). LAB_MODULE may point at another metaroce.ko.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$ROOT/build/verbs"
gcc -Wall -Wextra -Wno-missing-field-initializers -O2 -I"$ROOT/include/uapi" \
	-o "$ROOT/build/verbs/badinput" "$ROOT/selftests/verbs/badinput.c" \
	-libverbs || lab_fatal "cannot build badinput.c"

res() {	# the resource summary of n1's mrc0
	n1 'rdma res show | grep " mrc0:"'
}

lab_start
check "n1: metaroce loaded, mrc0 on eth0" lab_load_metaroce n1
check "n1: resource baseline (rdma res)" eval 'BASE=$(res) && echo "$BASE"'
check "n1: badinput: every abuse refused or failed, process goes on" \
	n1 "$ROOT/build/verbs/badinput mrc0"
check "n1: badinput again (same answers the second time)" \
	n1 "$ROOT/build/verbs/badinput mrc0 >/dev/null"
check "n1: nothing leaked (rdma res as before)" \
	eval 'NOW=$(res); echo "before: $BASE"; echo "after:  $NOW"; [ -n "$BASE" ] && [ "$NOW" = "$BASE" ]'
check "n1: no QP/CQ/MR left but the kernel's" \
	n1 '! rdma res show mr | grep -q "mrc0" && ! rdma res show qp | grep mrc0 | grep -vq "type GSI"'
check "n1: device still works (ibv_devinfo)" n1 'ibv_devinfo -d mrc0 | grep -q PORT_ACTIVE'
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
check "n1: rmmod metaroce" n1 rmmod metaroce
lab_summary
