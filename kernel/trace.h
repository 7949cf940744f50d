/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metaroce tracepoints: the transport's decisions, one event each.
 *
 *   echo 1 > /sys/kernel/tracing/events/metaroce/enable
 *   cat /sys/kernel/tracing/trace_pipe
 *
 * or `perf record -e 'metaroce:*'`. Documentation/design.rst lists them.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM metaroce

#if !defined(_METAROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _METAROCE_TRACE_H

#include <linux/tracepoint.h>

/* A sequenced packet leaves (first transmission or retransmission). */
TRACE_EVENT(metaroce_tx,
	TP_PROTO(u32 qpn, u8 opcode, u32 psn, u32 ppsn, u8 path, u16 sport,
		 u32 len, bool retx),
	TP_ARGS(qpn, opcode, psn, ppsn, path, sport, len, retx),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, ppsn)
		__field(u32, len)
		__field(u16, sport)
		__field(u8, opcode)
		__field(u8, path)
		__field(bool, retx)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->ppsn = ppsn;
		__entry->len = len;
		__entry->sport = sport;
		__entry->opcode = opcode;
		__entry->path = path;
		__entry->retx = retx;
	),
	TP_printk("qp %u op 0x%02x psn %u path %u ppsn %u sport %u len %u%s",
		  __entry->qpn, __entry->opcode, __entry->psn, __entry->path,
		  __entry->ppsn, __entry->sport, __entry->len,
		  __entry->retx ? " RETX" : "")
);

/* A packet arrived and parsed; @qpn is its destination QP. */
TRACE_EVENT(metaroce_rx,
	TP_PROTO(u32 qpn, u8 opcode, u32 psn, u32 ppsn, u8 path, u32 len,
		 bool ce),
	TP_ARGS(qpn, opcode, psn, ppsn, path, len, ce),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, ppsn)
		__field(u32, len)
		__field(u8, opcode)
		__field(u8, path)
		__field(bool, ce)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->ppsn = ppsn;
		__entry->len = len;
		__entry->opcode = opcode;
		__entry->path = path;
		__entry->ce = ce;
	),
	TP_printk("qp %u op 0x%02x psn %u path %u ppsn %u len %u%s",
		  __entry->qpn, __entry->opcode, __entry->psn, __entry->path,
		  __entry->ppsn, __entry->len, __entry->ce ? " CE" : "")
);

/*
 * A received packet was dropped before any QP state changed; @reason is
 * enum metaroce_drop_reason (the values are spelled out below, checked by
 * static_assert in trace.c).
 */
TRACE_EVENT(metaroce_rx_drop,
	TP_PROTO(int reason, u32 len),
	TP_ARGS(reason, len),
	TP_STRUCT__entry(
		__field(int, reason)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->reason = reason;
		__entry->len = len;
	),
	TP_printk("%s len %u",
		  __print_symbolic(__entry->reason, { 0, "malformed" },
				   { 1, "icrc" }, { 2, "noqp" },
				   { 3, "qp-not-ready" }, { 4, "peer" }),
		  __entry->len)
);

/* An ACK/NAK was applied to the requester's scoreboard. */
TRACE_EVENT(metaroce_ack,
	TP_PROTO(u32 qpn, u8 syndrome, u32 cum_psn, u32 una, u32 nxt,
		 u32 newly_acked, u32 newly_lost, u32 ce),
	TP_ARGS(qpn, syndrome, cum_psn, una, nxt, newly_acked, newly_lost, ce),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, cum_psn)
		__field(u32, una)
		__field(u32, nxt)
		__field(u32, newly_acked)
		__field(u32, newly_lost)
		__field(u32, ce)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->cum_psn = cum_psn;
		__entry->una = una;
		__entry->nxt = nxt;
		__entry->newly_acked = newly_acked;
		__entry->newly_lost = newly_lost;
		__entry->ce = ce;
		__entry->syndrome = syndrome;
	),
	TP_printk("qp %u syn 0x%02x cum %u una %u nxt %u acked %u lost %u ce %u",
		  __entry->qpn, __entry->syndrome, __entry->cum_psn,
		  __entry->una, __entry->nxt, __entry->newly_acked,
		  __entry->newly_lost, __entry->ce)
);

/* A lost PSN is sent again; @cause is MRC_LOSS_* (ack, tlp, nak, rto). */
TRACE_EVENT(metaroce_retransmit,
	TP_PROTO(u32 qpn, u32 psn, u8 path, u8 cause),
	TP_ARGS(qpn, psn, path, cause),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, path)
		__field(u8, cause)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->path = path;
		__entry->cause = cause;
	),
	TP_printk("qp %u psn %u on path %u cause %u", __entry->qpn,
		  __entry->psn, __entry->path, __entry->cause)
);

/* The retransmission timer fired (a tail-loss probe or an RTO). */
TRACE_EVENT(metaroce_timer,
	TP_PROTO(u32 qpn, bool tlp, u32 una, u32 nxt, u32 retries),
	TP_ARGS(qpn, tlp, una, nxt, retries),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, una)
		__field(u32, nxt)
		__field(u32, retries)
		__field(bool, tlp)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->una = una;
		__entry->nxt = nxt;
		__entry->retries = retries;
		__entry->tlp = tlp;
	),
	TP_printk("qp %u %s una %u nxt %u retries %u", __entry->qpn,
		  __entry->tlp ? "TLP" : "RTO", __entry->una, __entry->nxt,
		  __entry->retries)
);

/* A path got a fresh UDP source port (blackhole detected). */
TRACE_EVENT(metaroce_path_replace,
	TP_PROTO(u32 qpn, u8 path, u16 old_sport, u16 new_sport),
	TP_ARGS(qpn, path, old_sport, new_sport),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u16, old_sport)
		__field(u16, new_sport)
		__field(u8, path)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->old_sport = old_sport;
		__entry->new_sport = new_sport;
		__entry->path = path;
	),
	TP_printk("qp %u path %u sport %u -> %u", __entry->qpn,
		  __entry->path, __entry->old_sport, __entry->new_sport)
);

#endif /* _METAROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
