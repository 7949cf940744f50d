/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deterministic simulator of the metaroce transport (see
 * Documentation/design.rst, "Simulation").
 *
 * One run = one 64-bit seed: a virtual clock, an event queue, a fabric of
 * N nodes with several ECMP routes per directed pair (chosen by hashing
 * the packet's UDP source port, as switches do with the port of the
 * path, kernel/core/path.c), per-route queues with ECN marking and fault
 * injection. Every packet is serialised with kernel/core/hdr.c's builder
 * (ICRC appended) and parsed with its parser, so the wire code runs too.
 * Nothing reads the host clock or an unseeded random source.
 */
#ifndef SIM_H
#define SIM_H

#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>

#include "mrc_types.h"
#include "seq.h"
#include "hdr.h"
#include "sack.h"
#include "path.h"
#include "cc.h"
#include "rtt.h"
#include "rspq.h"
#include "worder.h"

/* ------------------------------------------------------------ PRNG */

/*
 * At most one draw per expression (a draw: rng_*(), or any call that may
 * draw or send a packet): f(rng_below(), rng_range()) or rng_next() >>
 * rng_below() draw in an order C leaves to the compiler, and a seed would
 * replay differently in another build. Draw into named locals, one per
 * statement; selftests/sim/determinism.sh compares the builds.
 */

struct sim_rng {
	u64 s[4];
};

void rng_seed(struct sim_rng *r, u64 seed);
u64 rng_next(struct sim_rng *r);
/* uniform in [0, n) (n > 0) */
u64 rng_below(struct sim_rng *r, u64 n);
/* true with probability ppm / 1e6 */
bool rng_ppm(struct sim_rng *r, u32 ppm);
/* uniform in [lo, hi] */
u64 rng_range(struct sim_rng *r, u64 lo, u64 hi);

/* ------------------------------------------------------ coverage */

/*
 * Counters of the states and transitions the runs reached, printed by
 * --coverage; those never reached are listed. X(name, "what").
 */
#define SIM_COV_LIST(X) \
	X(rx_new, "rx verdict NEW") \
	X(rx_dup, "rx verdict DUP") \
	X(rx_oow, "rx verdict OOW (beyond the window)") \
	X(rx_ooo, "rx NEW out of order (psn != cum)") \
	X(rx_cum_jump, "rx commit closed a hole (cum advanced > 1)") \
	X(rx_ack_due, "rx ACK due at once") \
	X(rx_ack_delayed, "rx delayed-ACK timer fired") \
	X(rx_dsack, "ACK carried a DSACK") \
	X(rx_corrupt, "packet rejected by the parser (ICRC)") \
	X(sb_new, "sb: new PSN sent") \
	X(sb_retx, "sb: retransmission") \
	X(sb_sacked, "sb: PSN selectively acked") \
	X(sb_cum, "sb: cumulative point advanced") \
	X(sb_resp_ack, "sb: a response acknowledged its request (implicit ACK)") \
	X(sb_cum_lo, "sb: a packet's cum_lo acknowledged (version 2)") \
	X(sb_lost_ack, "sb: lost by the per-path ACK rule") \
	X(sb_lost_rto, "sb: lost by RTO") \
	X(sb_lost_tlp, "sb: lost by tail-loss probe") \
	X(rx_voided, "rx: a request voided by an RNR refusal (epoch)") \
	X(sb_lost_path, "sb: lost with its blackholed path") \
	X(sb_spurious, "sb: spurious retransmission detected") \
	X(sb_window_full, "sb: MRC_WND window full") \
	X(sb_ack_rejected, "sb: ACK rejected as inconsistent") \
	X(sb_ack_old, "sb: old (reordered) ACK applied") \
	X(path_full, "paths: every path at its cwnd") \
	X(path_replaced, "paths: blackholed path got a new port") \
	X(path_timeout, "paths: RTO attributed to a path") \
	X(cc_ce, "cc: CE echoed") \
	X(cc_loss, "cc: loss decrease") \
	X(cc_at_min, "cc: window at its minimum") \
	X(cc_at_max, "cc: window at its maximum") \
	X(rto_fired, "timer: RTO") \
	X(tlp_fired, "timer: tail-loss probe") \
	X(rto_early, "timer: RTO/PTO fired early, armed again (lazy)") \
	X(rto_stopped, "timer: RTO/PTO fired after it was stopped") \
	X(giveup, "QP gave up (retry exceeded)") \
	X(ecn_marked, "fabric: CE marked") \
	X(tail_drop, "fabric: queue overflow drop") \
	X(f_loss, "fault: random loss") \
	X(f_burst, "fault: burst loss") \
	X(f_reorder, "fault: reorder delay") \
	X(f_dup, "fault: duplicate") \
	X(f_corrupt, "fault: corruption") \
	X(f_blackhole, "fault: route blackholed") \
	X(f_flap, "fault: link flap") \
	X(f_spike, "fault: delay spike") \
	X(f_rnr, "fault: RNR window (no receive posted)") \
	X(f_dereg, "fault: MR deregistered mid-run") \
	X(f_vanish, "fault: MR gone right after a successful lookup") \
	X(f_vanish_held, "fault: ... of a message with a held packet") \
	X(f_qp_err, "fault: QP moved to error by the app") \
	X(f_reset, "fault: QP reset and reused") \
	X(f_spurious_retx, "fault: requester resends an acked PSN") \
	X(f_access, "fault: QP without a remote access right") \
	X(f_badwqe, "fault: an invalid send WQE") \
	X(f_rnrx, "fault: RNR retries exceeded (finite rnr_retry)") \
	X(f_close, "fault: receiver closed its QP after its last message") \
	X(f_rnrdep, "fault: receive held while the receiver's READs run") \
	X(f_stale_alias, "fault: old life's cum_lo names new-life PSNs") \
	X(resp_placed, "responder: packet placed") \
	X(resp_drop, "responder: packet left uncommitted") \
	X(resp_held, "responder: WRITE last packet held") \
	X(resp_deferred_run, "responder: held packet placed later") \
	X(resp_held_fail, "responder: acked held packet not placeable (MR gone)") \
	X(resp_rnr, "responder: RNR NAK") \
	X(resp_nak_access, "responder: REM_ACCESS NAK") \
	X(resp_nak_inv, "responder: INV_REQ NAK") \
	X(resp_rspq_wait, "responder: READ/atomic waits for earlier PSNs") \
	X(resp_rspq_run, "responder: READ/atomic executed") \
	X(resp_wo_split, "responder: WRITE clipped by a later WRITE") \
	X(resp_wo_skip, "responder: WRITE fully overwritten by later") \
	X(resp_send_inv, "responder: SEND_WITH_INV invalidated") \
	X(resp_rcqe, "responder: receive completion") \
	X(resp_err, "responder: QP error") \
	X(req_cqe_ok, "requester: successful completion") \
	X(req_cqe_err, "requester: error completion") \
	X(comp_fnak_flush, "completer: an acknowledged READ/atomic flushed after a fatal NAK's wait") \
	X(req_flush, "requester: flushed WR") \
	X(req_rnr_retry, "requester: RNR retry") \
	X(req_fence, "requester: fenced WR (after READ/atomics)") \
	X(req_junk_rkey, "requester: zero-length WRITE*/READ, rkey unset") \
	X(req_probe, "requester: PROBE for an awaited response") \
	X(req_pto_r, "requester: READ/atomic tail probe at PTO_R > PTO") \
	X(resp_gone_probe, "responder: PROBE for a READ response whose MR is gone") \
	X(cc_undo, "completer: spurious timeout undone") \
	X(qp_bidir, "engines: WR streams both ways over one QP pair") \
	X(op_write, "op: WRITE") \
	X(op_write_imm, "op: WRITE_IMM") \
	X(op_send, "op: SEND") \
	X(op_send_imm, "op: SEND_IMM") \
	X(op_send_inv, "op: SEND_WITH_INV") \
	X(op_read, "op: READ") \
	X(op_cas, "op: CMP_SWAP") \
	X(op_faa, "op: FETCH_ADD")

enum sim_cov {
#define SIM_COV_ENUM(n, d) COV_##n,
	SIM_COV_LIST(SIM_COV_ENUM)
	COV_MAX
};

extern u64 sim_cov[COV_MAX];
#define COV(n)	(sim_cov[COV_##n]++)

/* ------------------------------------------------------ failures */

/* Report an invariant violation: prints, then ends the run. */
void sim_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						   noreturn));
#define SIM_CHECK(cond, ...)	do { if (!(cond)) sim_fail(__VA_ARGS__); } while (0)

/* -------------------------------------------------- events, clock */

struct sim_timer {
	u64 gen;		/* bumped on every arm/cancel */
	u64 when;
	bool armed;
	void (*fn)(void *arg);
	void *arg;
};

void timer_init(struct sim_timer *t, void (*fn)(void *), void *arg);
void timer_arm(struct sim_timer *t, u64 delay_us);	/* (re)arm */
void timer_cancel(struct sim_timer *t);

/* Run fn(arg) at now + delay (not cancellable). */
void sim_at(u64 delay_us, void (*fn)(void *, u64), void *arg, u64 x);

/* ------------------------------------------------------- faults */

struct sim_faults {
	u32 loss_ppm;		/* random loss */
	u32 burst_ppm;		/* chance to enter a loss burst */
	u32 burst_len;		/* mean packets lost in a burst */
	u32 reorder_ppm;	/* extra random delay */
	u32 reorder_us;		/* up to this much */
	u32 dup_ppm;
	u32 corrupt_ppm;
	u32 blackhole_ppm;	/* per packet: its route goes dark */
	u32 flap_ppm;		/* per packet: the pair's links go down */
	u32 spike_ppm;		/* per packet: its route slows down */
	u32 rnr_ppm;		/* per receive post: stop posting a while */
	u32 dereg;		/* runs: deregister an MR mid-run */
	u32 qp_err;		/* runs: move a QP to error mid-run */
	u32 reset;		/* runs: reset the QPs and run a second life */
	u32 spurious_ppm;	/* requester resends an already acked PSN */
	u32 access;		/* runs: the responder QP lacks a remote right */
	u32 stale;		/* reset: the old life's packets stay in flight */
	u32 invread;		/* SEND_WITH_INV of an MR READ earlier */
	u32 badwqe;		/* runs: one WQE is invalid (engines) */
	u32 rnrx;		/* rnr_retry = rnrx - 1 (0: infinite, 7) */
	u32 close;		/* the receiver closes its QP after its last
				 * message (engines, rc) */
	u32 vanish;		/* rc: an MR vanishes (deregistered or
				 * invalidated by another context) right
				 * after a successful lookup, preferably
				 * while a packet of the message is held */
	u32 rnrdep;		/* rc pair: rc[0]'s receiver takes a receive
				 * only once its own READs/atomics to the
				 * peer completed; RNR NAKs ask for
				 * min_rnr_timer 14 + rnrdep (1.92-7.68 ms) */
	u32 rnrhold;		/* rnrdep, with rc[0]'s send queue at most 8
				 * deep and one receive per READ/atomic of
				 * rc[1] completed: the window never fills */
};

/* Named fault mixes for --faults (comma separated, "all", "none"). */
int faults_parse(const char *spec, struct sim_faults *f, struct sim_rng *r);

/* ------------------------------------------------------- fabric */

#define SIM_MAX_NODES	4
#define SIM_ROUTES	4	/* ECMP routes per directed pair */
#define SIM_PKT_MAX	(MRC_MAX_HDR_LEN + 1024 + MRC_ICRC_LEN)

struct sim_route {
	u64 busy_until;		/* the port's queue drains at this time */
	u64 dark_until;		/* blackholed until */
	u64 slow_until;		/* delay spike until */
	u32 spike_us;
};

struct sim_link {		/* one directed node pair */
	struct sim_route r[SIM_ROUTES];
	u64 down_until;		/* link flap */
	u32 burst_left;		/* packets still to lose in a burst */
	u64 burst_until;	/* ... until then (us) */
	u32 salt;		/* ECMP hash seed */
};

struct sim_fabric {
	u32 nodes;
	u32 prop_us;		/* propagation delay */
	u32 ns_per_byte;	/* serialisation (ns per byte) */
	u32 ecn_bytes;		/* CE above this queue depth */
	u32 cap_bytes;		/* tail drop above this */
	struct sim_link link[SIM_MAX_NODES][SIM_MAX_NODES];
};

/* A packet on the wire (serialised). */
struct sim_wire {
	u32 src, dst;		/* nodes */
	u16 sport;
	u8 ce;
	u32 len;
	u8 buf[SIM_PKT_MAX];
};

/* Receive hook: the run's dispatch of a parsed packet to a QP. */
typedef void (*sim_rx_fn)(u32 node, const struct mrc_pkt *p,
			  const u8 *payload, bool ce);

/* --------------------------------------------------------- world */

struct sim_opts {
	u64 seed;
	const char *faults;	/* spec */
	const char *scenario;	/* "stream", "rc" */
	u32 ops;		/* WRs (rc) or packets (stream) per run */
	bool pair;		/* rc engines: both QPs send WR streams */
	u8 requester;		/* rc: 0 any, 1 the sim's, 2 core completer,
				   3 both QPs of core engines */
	bool strict;		/* rc: no fences: a later WRITE/atomic/SEND_INV
				   may pass a READ/atomic, as IB allows, but
				   the reference is strict PSN order */
	bool digest;		/* --digest: print each run's W.digest */
	int verbose;
};

struct sim_world {
	u64 now;		/* virtual microseconds */
	u64 evseq;
	u64 end_by;		/* no-hang bound */
	struct sim_rng rng;
	struct sim_rng frng;	/* "vanish": its own stream, so that a run
				 * is the same run up to the vanishing */
	struct sim_faults f;
	struct sim_fabric fab;
	sim_rx_fn rx;
	u64 steps;		/* events run */
	u64 ops_done;		/* operations (WRs / packets) completed */
	u64 pkts;		/* packets sent into the fabric */
	const struct sim_opts *o;
	void (*step_check)(void);	/* invariants after every event */
	void (*cleanup)(void);		/* free the scenario's state */
	bool reset_done;		/* a QP was reset: stale packets */
	u64 digest;		/* the run's trace (sim_digest()): --digest */
	char what[256];		/* scenario description */
};

extern struct sim_world W;

/*
 * The run's trace digest (W.digest, printed by --digest): every random
 * draw, every event run (time, sequence, argument) and every packet sent
 * (its bytes and the fabric's verdict) is folded in, so that two builds
 * (compilers, flags, sanitizers) that run a seed differently print
 * different digests (selftests/sim/determinism.sh).
 */
void sim_digest(u64 v);

/* Serialise @p + @payload and send from @src to @dst with @sport. */
void fab_send(u32 src, u32 dst, u16 sport, const struct mrc_pkt *p,
	      const void *payload);

/* Drop every packet in flight (a quiet network). */
void fab_drop_inflight(void);

/* Drop pending events, free the queue (end of a run). */
void sim_world_end(void);

/* Run events until none is left or @until; false on the time bound. */
bool sim_run_until(bool (*done)(void), u64 until);

/* Scenarios: set up, run, check. Return 0 (pass) or sim_fail(). */
void scn_stream(void);
void scn_rc(void);
void scn_uc(void);	/* "uc": only when named (not part of "all") */
/* Print the responder engine's transition coverage. */
void rc_coverage(void);

#endif /* SIM_H */
