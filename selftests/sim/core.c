// SPDX-License-Identifier: GPL-2.0
/*
 * Simulator core: PRNG, virtual clock and event queue, timers, the fabric
 * and its faults. See sim.h.
 */
#include <stdarg.h>
#include "sim.h"

struct sim_world W;
u64 sim_cov[COV_MAX];

/* ------------------------------------------------------------ PRNG */

static u64 splitmix64(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct sim_rng *r, u64 seed)
{
	u64 x = seed;
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static u64 rotl(u64 x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* ------------------------------------------------------ digest */

void sim_digest(u64 v)
{
	u64 h = (W.digest ^ v) * 0x9e3779b97f4a7c15ULL;

	W.digest = h ^ (h >> 29);
}

static void sim_digest_buf(const u8 *b, u32 n)
{
	u64 v;
	u32 i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&v, b + i, 8);
		sim_digest(v);
	}
	for (v = 0; i < n; i++)
		v = v << 8 | b[i];
	sim_digest(v ^ (u64)n << 48);
}

u64 rng_next(struct sim_rng *r)	/* xoshiro256** */
{
	u64 *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	sim_digest(res);
	return res;
}

u64 rng_below(struct sim_rng *r, u64 n)
{
	return n ? rng_next(r) % n : 0;
}

bool rng_ppm(struct sim_rng *r, u32 ppm)
{
	return ppm && rng_below(r, 1000000) < ppm;
}

u64 rng_range(struct sim_rng *r, u64 lo, u64 hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

/* ------------------------------------------------------ event queue */

struct sim_ev {
	u64 when, seq;
	void (*fn)(void *arg, u64 x);
	void *arg;
	u64 x;
};

static struct sim_ev *heap;
static size_t heap_n, heap_cap;

static bool ev_before(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

static void ev_push(u64 when, void (*fn)(void *, u64), void *arg, u64 x)
{
	size_t i;

	if (heap_n == heap_cap) {
		heap_cap = heap_cap ? heap_cap * 2 : 1024;
		heap = realloc(heap, heap_cap * sizeof(*heap));
		if (!heap)
			abort();
	}
	i = heap_n++;
	heap[i] = (struct sim_ev){ when, W.evseq++, fn, arg, x };
	while (i && ev_before(&heap[i], &heap[(i - 1) / 2])) {
		struct sim_ev t = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct sim_ev ev_pop(void)
{
	struct sim_ev top = heap[0], t;
	size_t i = 0;

	heap[0] = heap[--heap_n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < heap_n && ev_before(&heap[l], &heap[m]))
			m = l;
		if (r < heap_n && ev_before(&heap[r], &heap[m]))
			m = r;
		if (m == i)
			break;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
	return top;
}

void sim_at(u64 delay_us, void (*fn)(void *, u64), void *arg, u64 x)
{
	ev_push(W.now + delay_us, fn, arg, x);
}

static void timer_ev(void *arg, u64 gen)
{
	struct sim_timer *t = arg;

	if (!t->armed || t->gen != gen)
		return;
	t->armed = false;
	t->fn(t->arg);
}

void timer_init(struct sim_timer *t, void (*fn)(void *), void *arg)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
}

/* generations are unique over a run: a re-initialised timer never
   matches an event queued for its previous life */
static u64 timer_gen;

void timer_arm(struct sim_timer *t, u64 delay_us)
{
	t->gen = ++timer_gen;
	t->armed = true;
	t->when = W.now + delay_us;
	ev_push(t->when, timer_ev, t, t->gen);
}

void timer_cancel(struct sim_timer *t)
{
	t->gen = ++timer_gen;
	t->armed = false;
}

static void deliver_ev(void *arg, u64 x);
static struct sim_wire *cur_wire;

/* Drop every pending event (end of a run). */
static void ev_clear(void)
{
	while (heap_n) {
		struct sim_ev e = ev_pop();

		if (e.fn == deliver_ev)
			free(e.arg);
	}
}

void fab_drop_inflight(void)
{
	size_t i, n = heap_n;
	struct sim_ev *old = malloc(n * sizeof(*old) + 1);

	if (!old)
		abort();
	memcpy(old, heap, n * sizeof(*old));
	heap_n = 0;
	for (i = 0; i < n; i++) {
		if (old[i].fn == deliver_ev)
			free(old[i].arg);
		else
			ev_push(old[i].when, old[i].fn, old[i].arg, old[i].x);
	}
	free(old);
}

bool sim_run_until(bool (*done)(void), u64 until)
{
	while (heap_n && !(done && done())) {
		struct sim_ev e;

		if (heap[0].when > until) {
			W.now = until;
			return false;
		}
		e = ev_pop();
		if (e.when > W.now)
			W.now = e.when;
		sim_digest(e.when);
		sim_digest(e.seq);
		sim_digest(e.x);
		e.fn(e.arg, e.x);
		W.steps++;
		if (W.step_check)
			W.step_check();
	}
	return true;
}

void sim_world_end(void)
{
	ev_clear();
	free(cur_wire);
	cur_wire = NULL;
	free(heap);
	heap = NULL;
	heap_cap = 0;
}

/* ------------------------------------------------------- faults */

int faults_parse(const char *spec, struct sim_faults *f, struct sim_rng *r)
{
	char buf[256], *tok, *save = NULL;
	bool all = false, any = false;

	memset(f, 0, sizeof(*f));
	snprintf(buf, sizeof(buf), "%s", spec ? spec : "all");
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		/* "all": every fault, each on in a random half of the runs */
		if (!strcmp(tok, "all")) {
			all = true;
			continue;
		}
		if (!strcmp(tok, "none")) {
			any = true;
			continue;
		}
		any = true;
		if (!strcmp(tok, "loss"))
			f->loss_ppm = rng_range(r, 1000, 50000);
		else if (!strcmp(tok, "burst")) {
			f->burst_ppm = rng_range(r, 100, 3000);
			f->burst_len = rng_range(r, 2, 40);
		} else if (!strcmp(tok, "reorder")) {
			f->reorder_ppm = rng_range(r, 10000, 500000);
			f->reorder_us = rng_range(r, 5, 400);
		} else if (!strcmp(tok, "dup"))
			f->dup_ppm = rng_range(r, 1000, 50000);
		else if (!strcmp(tok, "corrupt"))
			f->corrupt_ppm = rng_range(r, 1000, 20000);
		else if (!strcmp(tok, "blackhole"))
			f->blackhole_ppm = rng_range(r, 10, 500);
		else if (!strcmp(tok, "flap"))
			f->flap_ppm = rng_range(r, 5, 100);
		else if (!strcmp(tok, "spike"))
			f->spike_ppm = rng_range(r, 10, 500);
		else if (!strcmp(tok, "rnr"))
			f->rnr_ppm = rng_range(r, 10000, 100000);
		else if (!strcmp(tok, "dereg"))
			f->dereg = 1;
		else if (!strcmp(tok, "vanish"))
			f->vanish = 1;
		else if (!strcmp(tok, "qperr"))
			f->qp_err = 1;
		else if (!strcmp(tok, "reset"))
			f->reset = 1;
		else if (!strcmp(tok, "stale"))
			f->stale = 1;
		else if (!strcmp(tok, "invread"))
			f->invread = 1;
		else if (!strcmp(tok, "badwqe"))
			f->badwqe = 1;
		else if (!strcmp(tok, "badwqe2"))
			f->badwqe = 2;
		else if (!strcmp(tok, "access"))
			f->access = 1;
		else if (!strcmp(tok, "rnrx")) {
			/* RNR retries run out: needs RNR windows */
			if (!f->rnr_ppm)
				f->rnr_ppm = rng_range(r, 10000, 100000);
			f->rnrx = 1 + rng_below(r, 3);
		}
		else if (!strcmp(tok, "close"))
			f->close = 1;	/* never in "all": its seeds stay */
		else if (!strcmp(tok, "rnrdep"))
			f->rnrdep = 1 + rng_below(r, 5);	/* nor this */
		else if (!strcmp(tok, "rnrhold")) {
			f->rnrdep = 1 + rng_below(r, 5);	/* nor this */
			f->rnrhold = 1;
		}
		else if (!strcmp(tok, "spurious"))
			f->spurious_ppm = rng_range(r, 1000, 20000);
		else
			return -1;
	}
	if (all && !any) {
		/* each fault on with probability 1/2, rarer ones 1/4 */
		if (rng_below(r, 2))
			f->loss_ppm = rng_range(r, 1000, 50000);
		if (rng_below(r, 2)) {
			f->burst_ppm = rng_range(r, 100, 3000);
			f->burst_len = rng_range(r, 2, 40);
		}
		if (rng_below(r, 2)) {
			f->reorder_ppm = rng_range(r, 10000, 500000);
			f->reorder_us = rng_range(r, 5, 400);
		}
		if (rng_below(r, 2))
			f->dup_ppm = rng_range(r, 1000, 50000);
		if (rng_below(r, 2))
			f->corrupt_ppm = rng_range(r, 1000, 20000);
		if (!rng_below(r, 4))
			f->blackhole_ppm = rng_range(r, 10, 500);
		if (!rng_below(r, 4))
			f->flap_ppm = rng_range(r, 5, 100);
		if (!rng_below(r, 4))
			f->spike_ppm = rng_range(r, 10, 500);
		if (rng_below(r, 2))
			f->rnr_ppm = rng_range(r, 10000, 100000);
		f->dereg = !rng_below(r, 8);
		f->qp_err = !rng_below(r, 8);
		f->reset = !rng_below(r, 4);
		f->access = !rng_below(r, 16);
		f->badwqe = !rng_below(r, 8);
		if (rng_below(r, 2))
			f->spurious_ppm = rng_range(r, 1000, 20000);
		/* the patterns of findings 4, 6 and 8 (fixed) */
		f->stale = f->reset && rng_below(r, 2);
		f->invread = rng_below(r, 2);
		if (f->badwqe && rng_below(r, 2))
			f->badwqe = 2;
		/*
		 * A finite rnr_retry (0..2) in half of the runs with RNR
		 * windows, derived from rnr_ppm rather than drawn: every
		 * other fault of a seed stays what it was before rnrx.
		 */
		if (f->rnr_ppm && !(f->rnr_ppm & 1))
			f->rnrx = 1 + (f->rnr_ppm >> 2) % 3;
		/*
		 * "vanish" in an eighth of the runs, those with reordering
		 * (held packets), derived as rnrx: the seeds stay as they
		 * were up to the moment the MR vanishes.
		 */
		f->vanish = f->reorder_ppm % 4 == 1;
	}
	return 0;
}

/* ------------------------------------------------------- fabric */

static u32 mix32(u32 x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static void deliver_ev(void *arg, u64 x)
{
	struct sim_wire *w = arg;
	struct mrc_pkt p;
	int err;

	(void)x;
	err = mrc_pkt_parse(w->buf, w->len, &p, 0);
	if (err) {
		/* only corruption may make a packet we built unparseable */
		SIM_CHECK(x, "packet %u->%u rejected (%s) but not corrupted",
			  w->src, w->dst, mrc_err_str(err));
		COV(rx_corrupt);
		free(w);
		return;
	}
	SIM_CHECK(!x, "corrupted packet %u->%u passed the parser (op %u psn %u)",
		  w->src, w->dst, p.opcode, p.psn);
	cur_wire = w;	/* freed by sim_world_end() if the run fails in it */
	W.rx(w->dst, &p, w->buf + p.hdr_len, w->ce);
	cur_wire = NULL;
	free(w);
}

static void fab_put(struct sim_wire *w, u64 at, bool corrupt)
{
	if (corrupt) {
		/* a burst of at most 32 bits: CRC32C detects every one */
		u32 pos = rng_below(&W.rng, w->len * 8 - 32);
		u32 bits = rng_range(&W.rng, 1, 0xffffffffU), i;

		for (i = 0; i < 32; i++)
			if (bits & (1U << i))
				w->buf[(pos + i) / 8] ^= 1U << ((pos + i) % 8);
		COV(f_corrupt);
	}
	sim_digest(at << 1 | w->ce);
	ev_push(at, deliver_ev, w, corrupt);
}

void fab_send(u32 src, u32 dst, u16 sport, const struct mrc_pkt *p,
	      const void *payload)
{
	struct sim_fabric *fb = &W.fab;
	struct sim_link *l = &fb->link[src][dst];
	struct sim_faults *f = &W.f;
	struct sim_route *rt;
	struct sim_wire *w;
	u64 now = W.now, at, depth_ns;
	int hl;

	w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	w->src = src;
	w->dst = dst;
	w->sport = sport;
	hl = mrc_hdr_build(p, w->buf, sizeof(w->buf));
	if (hl <= 0 || hl + p->payload_len + MRC_ICRC_LEN > SIM_PKT_MAX)
		free(w);	/* the run ends here */
	SIM_CHECK(hl > 0, "build of op %u psn %u failed: %s", p->opcode,
		  p->psn, mrc_err_str(hl));
	SIM_CHECK(hl + p->payload_len + MRC_ICRC_LEN <= SIM_PKT_MAX,
		  "packet too long for the sim");
	if (p->payload_len)
		memcpy(w->buf + hl, payload, p->payload_len);
	w->len = mrc_icrc_put(w->buf, hl + p->payload_len);
	W.pkts++;
	sim_digest((u64)src << 48 | (u64)dst << 32 | (u64)sport << 16);
	sim_digest_buf(w->buf, w->len);

	/* ECMP: the route is a hash of the flow's 5-tuple (its sport) */
	rt = &l->r[mix32(sport ^ l->salt) % SIM_ROUTES];

	if (rng_ppm(&W.rng, f->flap_ppm)) {
		l->down_until = now + rng_range(&W.rng, 100, 20000);
		COV(f_flap);
	}
	if (rng_ppm(&W.rng, f->blackhole_ppm)) {
		rt->dark_until = now + rng_range(&W.rng, 1000, 200000);
		COV(f_blackhole);
	}
	if (rng_ppm(&W.rng, f->spike_ppm)) {
		rt->slow_until = now + rng_range(&W.rng, 1000, 50000);
		rt->spike_us = rng_range(&W.rng, 100, 5000);
		COV(f_spike);
	}
	if (now < l->down_until || now < rt->dark_until)
		goto drop;
	/*
	 * A burst loses its next packets on this link, but only within a
	 * congestion episode's time (at most 50 ms): on an idle link a
	 * count alone would stretch over seconds of retransmissions, an
	 * outage that blackhole and flap model, with their own verdict.
	 */
	if (l->burst_left && now >= l->burst_until)
		l->burst_left = 0;
	if (l->burst_left) {
		l->burst_left--;
		goto drop;
	}
	if (rng_ppm(&W.rng, f->burst_ppm)) {
		l->burst_left = rng_range(&W.rng, 1, 2 * f->burst_len);
		l->burst_until = now + rng_range(&W.rng, 1000, 50000);
		COV(f_burst);
		goto drop;
	}
	if (rng_ppm(&W.rng, f->loss_ppm)) {
		COV(f_loss);
		goto drop;
	}

	/* the route's output port: FIFO, ECN above a threshold */
	if (rt->busy_until < now * 1000)
		rt->busy_until = now * 1000;
	depth_ns = rt->busy_until - now * 1000;
	if (depth_ns / fb->ns_per_byte > fb->cap_bytes) {
		COV(tail_drop);
		goto drop;
	}
	if (depth_ns / fb->ns_per_byte > fb->ecn_bytes) {
		w->ce = 1;
		COV(ecn_marked);
	}
	rt->busy_until += (u64)w->len * fb->ns_per_byte;
	at = rt->busy_until / 1000 + fb->prop_us;
	if (now < rt->slow_until)
		at += rt->spike_us;
	if (rng_ppm(&W.rng, f->reorder_ppm)) {
		at += rng_range(&W.rng, 1, f->reorder_us);
		COV(f_reorder);
	}
	if (rng_ppm(&W.rng, f->dup_ppm)) {
		struct sim_wire *d = malloc(sizeof(*d));
		bool dcorrupt;
		u64 dlate;

		if (!d)
			abort();
		*d = *w;
		/*
		 * One draw per statement (C leaves the order of a call's
		 * arguments open): this is the order CI's build (gcc -O1,
		 * ASan/UBSan) drew them in as fab_put()'s arguments, so that
		 * the seeds found so far stay (selftests/sim/determinism.sh).
		 */
		dcorrupt = rng_ppm(&W.rng, f->corrupt_ppm);
		dlate = rng_range(&W.rng, 0, 300);
		fab_put(d, at + dlate, dcorrupt);
		COV(f_dup);
	}
	fab_put(w, at, rng_ppm(&W.rng, f->corrupt_ppm));
	return;
drop:
	free(w);
}

/* ------------------------------------------------------ failures */

extern jmp_buf sim_fail_jmp;
extern char sim_fail_msg[512];

void sim_fail(const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(sim_fail_msg, sizeof(sim_fail_msg), "t=%llu us: ",
		     (unsigned long long)W.now);
	va_start(ap, fmt);
	vsnprintf(sim_fail_msg + n, sizeof(sim_fail_msg) - n, fmt, ap);
	va_end(ap);
	longjmp(sim_fail_jmp, 1);
}
