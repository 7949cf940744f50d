#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# kverbs: metaroce as a kernel ULP sees it, through kernel verbs, where
# user space cannot reach: the test module selftests/kmod/mrc_kverbs.c
# fast-registers an MR (IB_WR_REG_MR), WRITEs and READs it through its
# rkey from a second RC QP, REG_MRs it again while it is still valid
# (refused: IB_WC_LOC_QP_OP_ERR, as rdma_rxe; the old key keeps working),
# LOCAL_INVs and re-registers it with a new key (the old key then fails
# IB_WC_REM_ACCESS_ERR and changes no byte), every payload compared and
# wc->qp of every completion checked. A UD QP then sends datagrams to
# itself and its receive completion handler destroys their AH without
# sleeping (rdma_destroy_ah(ah, 0), as the CM does) in the softirq that
# interrupted the post: the sends still queued leave, every datagram
# arrives. It runs its checks in module init and logs one line each;
# each becomes a check here.
#
#   n1
#   +---------------------------------------------------------+
#   | mrc_kverbs.ko (insmod dev=mrc0; rmmod afterwards)        |
#   |   QP A (REG_MR, LOCAL_INV)  <-- RC -->  QP B (WRITE,READ) |
#   |   fast-reg MR over tbuf       loopback   lkey: PD's DMA   |
#   |   one PD, one CQ (IB_POLL_DIRECT) for both                |
#   | mrc0 -> eth0 192.0.2.1, GID ::ffff:192.0.2.1 (to itself)  |
#   +---------------------------------------------------------+
#   n2: idle
#
# The module is built against the lab kernel's headers into
# build/kmod-$LAB_KVER (selftests/kmod/Makefile; KVERBS_KDIR overrides
# the kernel build tree). Each wait of the module for a completion ends
# after 5 s (x LAB_SCALE on the debug kernel; KVERBS_SCALE overrides).
# LAB_MODULE may point at another metaroce.ko.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KOUT=$ROOT/build/kmod-$LAB_KVER
KO=$KOUT/mrc_kverbs.ko
make -s -C "$ROOT/selftests/kmod" KVER="$LAB_KVER" OUT="$KOUT" \
	${KVERBS_KDIR:+KDIR="$KVERBS_KDIR"} >&2 ||
	lab_fatal "cannot build selftests/kmod/mrc_kverbs.c for $LAB_KVER"
TMO=$((5000 * ${KVERBS_SCALE:-$LAB_SCALE}))

lab_start
check "n1: metaroce loaded, mrc0 on eth0" lab_add_dev n1 mrc0
# The module's lines follow this marker in n1's kernel log.
MARK="kverbs: insmod $$.$RANDOM"
check "n1: insmod mrc_kverbs.ko dev=mrc0 timeout_ms=$TMO (checks run in its init)" \
	n1 "echo '$MARK' >/dev/kmsg && insmod $KO dev=mrc0 timeout_ms=$TMO"
LINES=$(n1 "dmesg | sed -n '/$MARK/,\$p' | grep -o 'mrc_kverbs: .*'")
printf '%s\n' "$LINES" | sed 's/^/# n1: /'
while IFS= read -r l; do
	case $l in
	"mrc_kverbs: ok "*) check "n1: mrc_kverbs: ${l#mrc_kverbs: ok }" true ;;
	"mrc_kverbs: FAIL "*) check "n1: mrc_kverbs: ${l#mrc_kverbs: FAIL }" false ;;
	esac
done <<<"$LINES"
check "n1: mrc_kverbs ran to its summary: N passed, 0 failed" \
	grep -Eq '^mrc_kverbs: [1-9][0-9]* passed, 0 failed$' <<<"$LINES"
check "n1: rmmod mrc_kverbs" n1 rmmod mrc_kverbs
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
lab_summary
