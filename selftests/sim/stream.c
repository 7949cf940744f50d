// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario "stream": QPs between random node pairs each send a stream of
 * single-packet WRITEs in both directions through the fabric's faults.
 * Checks, besides the endpoint invariants (ep.h): every PSN's payload
 * arrives intact and is placed exactly once, every PSN is delivered and
 * acknowledged within the time bound, and an RNR-dropped packet is
 * resent.
 */
#include "ep.h"

#define ST_MAX_QP	6

struct st_side {
	struct ep ep;
	u32 total, sent, got;
	u64 rnr_until;
};

static struct st_side *st;	/* 2 per connection */
static u32 st_n;

static u32 st_len(u32 qpn, u32 k)
{
	u32 h = (qpn * 0x9e3779b1U) ^ (k * 0x85ebca6bU);

	h ^= h >> 15;
	h *= 0x2c1b3c6dU;
	h ^= h >> 12;
	return 1 + h % ep_mtu;
}

static u8 st_byte(u32 qpn, u32 k, u32 i)
{
	return (u8)((qpn * 131 + k * 31 + i * 7) ^ (k >> 8));
}

static int st_next(struct ep *e, struct mrc_pkt *p, u8 *payload)
{
	struct st_side *s = e->up;
	u32 k = s->sent, len, i;

	if (s->sent == s->total)
		return 0;
	len = st_len(e->qpn, k);
	p->opcode = MRC_OP_WRITE;
	p->flags = MRC_F_FIRST | MRC_F_LAST;
	p->write.va = (u64)k << 12;
	p->write.rkey = 1;
	p->write.msg_len = len;
	p->payload_len = len;
	for (i = 0; i < len; i++)
		payload[i] = st_byte(e->qpn, k, i);
	s->sent++;
	return 1;
}

static int st_recv(struct ep *e, const struct mrc_pkt *p, const u8 *payload,
		   u8 *syn)
{
	struct st_side *s = e->up;
	u32 k = p->psn - e->isn_rx, i;

	SIM_CHECK(p->opcode == MRC_OP_WRITE && p->write.va == (u64)k << 12,
		  "qp %u: psn %u carries another packet (va %llx)", e->qpn,
		  p->psn, (unsigned long long)p->write.va);
	SIM_CHECK(p->payload_len == st_len(e->peer_qpn, k),
		  "qp %u: psn %u length %u", e->qpn, p->psn, p->payload_len);
	for (i = 0; i < p->payload_len; i++)
		SIM_CHECK(payload[i] == st_byte(e->peer_qpn, k, i),
			  "qp %u: psn %u byte %u corrupted", e->qpn, p->psn, i);
	if (W.now < s->rnr_until) {
		*syn = MRC_SYN_RNR;
		COV(resp_rnr);
		return EP_DROP;
	}
	if (rng_ppm(&W.rng, W.f.rnr_ppm / 10)) {
		s->rnr_until = W.now + rng_range(&W.rng, 10, 2000);
		COV(f_rnr);
	}
	s->got++;
	COV(resp_placed);
	return EP_PLACED;
}

static void st_committed(struct ep *e, int r)
{
	(void)e;
	(void)r;
}

static void st_acked(struct ep *e)
{
	(void)e;
}

static void st_nak(struct ep *e, u8 syn, u32 psn)
{
	sim_fail("qp %u: unexpected NAK %u for psn %u", e->qpn, syn, psn);
}

static void st_error(struct ep *e)
{
	sim_fail("qp %u: unexpected QP error", e->qpn);
}

static const struct ep_ops st_ops = {
	.next = st_next,
	.recv = st_recv,
	.committed = st_committed,
	.acked = st_acked,
	.nak = st_nak,
	.error = st_error,
};

static void st_rx(u32 node, const struct mrc_pkt *p, const u8 *payload,
		  bool ce)
{
	u32 i;

	for (i = 0; i < st_n; i++)
		if (st[i].ep.node == node && st[i].ep.qpn == p->dst_qpn) {
			ep_on_pkt(&st[i].ep, p, payload, ce);
			return;
		}
	sim_fail("packet for unknown qp %u on node %u", p->dst_qpn, node);
}

static void st_check(void)
{
	u32 i;

	for (i = 0; i < st_n; i++)
		ep_check(&st[i].ep);
}

static bool st_done(void)
{
	u32 i;

	for (i = 0; i < st_n; i++) {
		struct st_side *s = &st[i];

		if (s->got != st[i ^ 1].total ||
		    s->ep.sb.una != s->ep.isn_tx + s->total)
			return false;
	}
	return true;
}

static void st_cleanup(void)
{
	u32 i;

	for (i = 0; i < st_n; i++)
		ep_free(&st[i].ep);
	free(st);
	st = NULL;
	st_n = 0;
}

static void st_kick(void *arg, u64 x)
{
	(void)x;
	ep_pump(arg);
}

void scn_stream(void)
{
	u32 nconn = rng_range(&W.rng, 1, ST_MAX_QP / 2), c, i;
	u32 npkts = W.o->ops ? W.o->ops : rng_range(&W.rng, 50, 1500);

	st_n = 2 * nconn;
	st = calloc(st_n, sizeof(*st));
	if (!st)
		abort();
	W.cleanup = st_cleanup;
	W.rx = st_rx;
	for (c = 0; c < nconn; c++) {
		u32 a = rng_below(&W.rng, W.fab.nodes), b;
		u32 isn_a = (u32)rng_next(&W.rng), isn_b = (u32)rng_next(&W.rng);
		u32 np = rng_range(&W.rng, 1, 8);

		do {
			b = rng_below(&W.rng, W.fab.nodes);
		} while (b == a);
		/* PSNs near the wrap now and then */
		if (!rng_below(&W.rng, 4))
			isn_a = 0u - (u32)rng_below(&W.rng, 500);
		ep_init(&st[2 * c].ep, a, b, 100 + 2 * c, 101 + 2 * c, isn_a,
			isn_b, np, &st_ops, &st[2 * c]);
		ep_init(&st[2 * c + 1].ep, b, a, 101 + 2 * c, 100 + 2 * c,
			isn_b, isn_a, np, &st_ops, &st[2 * c + 1]);
		st[2 * c].ep.peer = &st[2 * c + 1].ep;
		st[2 * c + 1].ep.peer = &st[2 * c].ep;
		st[2 * c].total = npkts;
		st[2 * c + 1].total = rng_below(&W.rng, 2) ? npkts / 4 : 0;
	}
	snprintf(W.what, sizeof(W.what), "stream: %u qps x %u pkts, mtu %u",
		 nconn, npkts, ep_mtu);
	W.step_check = st_check;
	for (i = 0; i < st_n; i++)
		sim_at(rng_below(&W.rng, 100), st_kick, &st[i].ep, 0);
	if (!sim_run_until(st_done, W.end_by) || !st_done()) {
		for (i = 0; i < st_n; i++)
			if (st[i].got != st[i ^ 1].total ||
			    st[i].ep.sb.una != st[i].ep.isn_tx + st[i].total)
				sim_fail("hang: qp %u got %u/%u, una %u of %u "
					 "(nxt %u nlost %u, rto armed %d)",
					 st[i].ep.qpn, st[i].got,
					 st[i ^ 1].total,
					 st[i].ep.sb.una - st[i].ep.isn_tx,
					 st[i].total,
					 st[i].ep.sb.nxt - st[i].ep.isn_tx,
					 st[i].ep.sb.nlost, st[i].ep.rto.armed);
	}
	for (i = 0; i < st_n; i++)
		W.ops_done += st[i].total;
}
