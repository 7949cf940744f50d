#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# conformance: verbs the issue-14 suite probes, over one device with
# loopback QP pairs (selftests/verbs/conformance.c): IBV_ACCESS_MW_BIND on
# reg_mr, ibv_create_cq_ex + start/next/end_poll + read_* + completion
# channel, ibv_create_qp_ex + the ibv_wr_* API (RC and UD), memory windows
# type 1 and 2 (bind, LOCAL_INV, SEND_WITH_INV, bounds and rights), IB
# error semantics (posting per QP state, LOC_PROT_ERR, LOC_LEN_ERR, RNR
# with rnr_retry 7, zero-based MRs), zero-length WRITE_WITH_IMM/WRITE/READ
# with an unset rkey (rsocket's control messages, IBA C9-88), the SQD
# drain (IBV_EVENT_SQ_DRAINED, sq_draining, WRs held until RTS), READ
# responses sent while the QP waits out an RNR NAK (rnr_resp), the last
# WQE reached event of a QP of an SRQ entering ERR (srq_last_wqe; rdma_rxe
# of Linux 6.1 never raises it: its reference checks fail), the SRQ's PD
# for its receive WQEs (srq_pd; rdma_rxe checks them against the QP's PD:
# its reference checks fail), and a READ/atomic accepted before a request
# the responder fails completing successfully (fatal_order; then again
# CONF_FATAL_ROUNDS times, 6 by default, under netem reordering on lo).
#
#   n1: mrc0 on eth0 (metaroce.ko)    n2: rxe0 on eth0 (stock rdma_rxe,
#       conformance mrc0                  conformance -R rxe0: reference)
#
# The rxe0 run is a reference: its result is printed, it does not fail
# the scenario (CONF_RXE=0 skips it). It leaves out the mw section unless
# CONF_RXE_SECTIONS says otherwise: rdma_rxe of Linux 6.1 WARNs (refcount
# underflow in __rxe_cleanup) on it, which would fail the kernel-log
# check. rdma_rxe of Linux 6.1 drains at SQD and raises SQ_DRAINED, but
# the SEND posted in SQD did not complete after SQD -> RTS here (it went
# with the next post_send): its sqd checks after RTS fail, for reference.
# On the debug kernel (LAB_KVER *-debug) the rxe0 run leaves sqd out too:
# there KASAN reports a slab-out-of-bounds read in rdma_rxe's rxe_mr_copy
# (from rxe_requester's copy_data, in ksoftirqd) during it, which would
# fail n2's kernel-log check for rxe's bug (seen in stop 33's debug run).
# CONF_SECTIONS limits the mrc0 run (conformance -s). LAB_MODULE
# may point at another metaroce.ko.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/verbs/conformance
mkdir -p "$ROOT/build/verbs"
gcc -Wall -Wextra -Wno-missing-field-initializers -O2 -o "$BIN" \
	"$ROOT/selftests/verbs/conformance.c" -libverbs ||
	lab_fatal "cannot build conformance.c"
# The sections metaroce implements so far (all: CONF_SECTIONS=all).
SEC=(-s "${CONF_SECTIONS:-mw_bind_mr,cq_ex,qp_ex,mw,errors,zerolen,sqd,rnr_resp,srq_last_wqe,srq_pd,fatal_order}")
[ "$CONF_SECTIONS" = all ] && SEC=()
RXE_DEF=mw_bind_mr,cq_ex,qp_ex,errors,zerolen,rnr_resp,srq_last_wqe,srq_pd,fatal_order,sqd
[[ "${LAB_KVER:-}" == *-debug ]] && RXE_DEF=${RXE_DEF%,sqd}
RXE_SEC=(-s "${CONF_RXE_SECTIONS:-$RXE_DEF}")

lab_start
check "n1: metaroce loaded, mrc0 on eth0" lab_add_dev n1 mrc0
check "n1: conformance mrc0" n1 "$BIN" "${SEC[@]}" mrc0
if [ "${CONF_RXE:-1}" = 1 ]; then
	lab_add_dev n2 rxe0 >/dev/null || echo "# n2: rxe0 did not load"
	echo "# reference: conformance -R rxe0 on n2"
	lab_run n2 "$BIN" -R "${RXE_SEC[@]}" rxe0 | sed 's/^/# rxe0: /'
	lab_run n2 rdma link delete rxe0 >/dev/null
fi
# fatal_order again under the reordering of a sprayed fabric: netem on
# n1's lo (the loopback pair's path) holds half of the packets for 2 ms
# and lets the other half go at once, so the NAK often overtakes the
# READ/atomic responses sent before it, and the failed request the READ;
# CONF_FATAL_ROUNDS rounds (6, ~3 s each). Before the fixes of stop 39, 4
# rounds of 6 failed; until stop 40's fix a READ of 256 KiB or 1 MiB was
# still flushed in about 1 round of 20 (the wait for its responses
# inherited the RTO armed for the WRITE before the NAK, ending 0.6 ms
# after it); with it 160 rounds passed.
if [ "${CONF_FATAL_ROUNDS:=6}" -gt 0 ] &&
   [[ ",${CONF_SECTIONS:-fatal_order}," == *,fatal_order,* ||
      "${CONF_SECTIONS:-}" == all ]]; then
	check "n1: netem on lo: delay 2ms, half of the packets at once" \
		n1 tc qdisc add dev lo root netem delay 2ms reorder 50%
	for ((i = 1; i <= CONF_FATAL_ROUNDS; i++)); do
		check "n1: conformance -s fatal_order mrc0, reordered, round $i" \
			n1 "$BIN" -s fatal_order mrc0
	done
	check "n1: netem off lo" n1 tc qdisc del dev lo root
fi
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
lab_summary
