#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# Verbs objects of metaroce.ko through libibverbs + the metaroce provider,
# on one node of the qemu lab (n2 just idles):
#
#   n1: mrc0 on eth0 (192.0.2.1) -- loopback RC pair, UD QP, SRQ, AH
#
# Builds selftests/verbs/objects.c into build/verbs/objects first.
# LAB_MODULE may point at another metaroce.ko.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$ROOT/build/verbs"
gcc -Wall -Wextra -Wno-missing-field-initializers -O2 \
	-o "$ROOT/build/verbs/objects" "$ROOT/selftests/verbs/objects.c" \
	-libverbs || lab_fatal "cannot build objects.c"

lab_start
check "n1: metaroce loaded, mrc0 on eth0" lab_load_metaroce n1
check "n1: ibv_devinfo -v -d mrc0" n1 'ibv_devinfo -v -d mrc0 | tee /dev/stderr | grep -q "transport:.*InfiniBand" && ibv_devinfo -v -d mrc0 | grep -q "max_qp:.*4096"'
check "n1: ib_mad's kernel GSI QP (QPN 1) exists" n1 'rdma res show qp | tee /dev/stderr | grep -q "lqpn 1 .*type GSI"'
check "n1: verbs objects (build/verbs/objects)" n1 "$ROOT/build/verbs/objects mrc0"
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
check "n1: rmmod metaroce" n1 rmmod metaroce
lab_summary
