// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Unit test of the provider's fast path against fake rings: post_send,
 * post_recv and poll_cq run on queues in ordinary memory whose indices
 * start just below 2^32, and the doorbell goes to a pipe standing in for
 * cmd_fd. Checks WQE/CQE layout, index wrap, queue-full handling, *bad_wr,
 * and that post_send rings exactly one doorbell per call that posted.
 *
 * Built and run by providers/metaroce/tests/run-tests.sh.
 */
#include "../metaroce.c"

#include <fcntl.h>
#include <assert.h>

static int failures;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n",	\
				__FILE__, __LINE__, #cond);		\
			failures++;					\
		}							\
	} while (0)

#define START_INDEX 0xfffffffeu	/* wraps after two WQEs */

static void *fake_queue(struct metaroce_ring *r, uint32_t num_slots,
			uint32_t slot_size)
{
	size_t size = METAROCE_QUEUE_HDR_SIZE + (size_t)num_slots * slot_size;
	struct metaroce_queue *hdr = calloc(1, size);
	int ret;

	assert(hdr);
	memset(hdr, 0, size);
	hdr->num_slots = num_slots;
	hdr->slot_size = slot_size;
	hdr->producer = START_INDEX;
	hdr->consumer = START_INDEX;
	ret = metaroce_ring_init(r, hdr, size, 16);
	assert(!ret);
	return hdr;
}

/* Number of doorbells waiting in the pipe; checks each one's format. */
static int doorbells(int fd, uint32_t qp_handle)
{
	struct ibv_post_send cmd;
	int n = 0;

	while (read(fd, &cmd, sizeof(cmd)) == sizeof(cmd)) {
		CHECK(cmd.hdr.command == IB_USER_VERBS_CMD_POST_SEND);
		CHECK(cmd.hdr.in_words == sizeof(cmd) / 4);
		CHECK(cmd.qp_handle == qp_handle);
		CHECK(cmd.wr_count == 0 && cmd.sge_count == 0);
		CHECK(cmd.wqe_size >= sizeof(struct ib_uverbs_send_wr));
		n++;
	}
	return n;
}

/*
 * An RC QP in RTS whose send queue is a fake ring of 4 slots (header +
 * room for 2 SGEs or 64 inline bytes) and whose doorbell is the pipe
 * @fds (read end non-blocking). Returns the ring's memory.
 */
static void *fake_rc_sq(struct metaroce_qp *qp, struct ibv_context *ctx,
			int fds[2])
{
	assert(!pipe(fds));
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	ctx->cmd_fd = fds[1];
	qp->vqp.qp.context = ctx;
	qp->vqp.qp.qp_type = IBV_QPT_RC;
	qp->vqp.qp.state = IBV_QPS_RTS;	/* sends need RTS (IBA 11.4.1.1) */
	qp->sq.max_sge = 2;
	qp->sq.max_inline = 64;
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	return fake_queue(&qp->sq.ring, 4, 128);
}

static void test_ring_init(void)
{
	size_t size = METAROCE_QUEUE_HDR_SIZE + 4 * 64;
	struct metaroce_queue *hdr = calloc(1, size);
	struct metaroce_ring r;

	memset(hdr, 0, size);
	hdr->num_slots = 4;
	hdr->slot_size = 64;
	CHECK(metaroce_ring_init(&r, hdr, size, 64) == 0);
	CHECK(r.slots == (uint8_t *)hdr + METAROCE_QUEUE_HDR_SIZE);
	CHECK(metaroce_ring_init(&r, hdr, size, 80) == EINVAL);
	CHECK(metaroce_ring_init(&r, hdr, size - 1, 64) == EINVAL);
	hdr->num_slots = 3;
	CHECK(metaroce_ring_init(&r, hdr, size, 16) == EINVAL);
	hdr->num_slots = 0;
	CHECK(metaroce_ring_init(&r, hdr, size, 16) == EINVAL);
	hdr->num_slots = 4;
	hdr->slot_size = 56;
	CHECK(metaroce_ring_init(&r, hdr, size, 16) == EINVAL);
	free(hdr);
}

static void test_post_send(void)
{
	struct ibv_context ctx = {};
	struct metaroce_qp qp = {};
	struct metaroce_ah ah = { .ah_num = 42 };
	struct metaroce_send_wqe *wqe;
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge[3];
	char payload[80];
	int fds[2];
	void *mem;

	mem = fake_rc_sq(&qp, &ctx, fds);
	qp.vqp.qp.handle = 7;

	memset(payload, 'x', sizeof(payload));
	memcpy(payload, "hello, ring", 11);
	sge[0] = (struct ibv_sge){ .addr = 0x1000, .length = 100, .lkey = 5 };
	sge[1] = (struct ibv_sge){ .addr = 0x2000, .length = 200, .lkey = 6 };
	sge[2] = (struct ibv_sge){ .addr = (uintptr_t)payload, .length = 11 };

	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].opcode = IBV_WR_SEND_WITH_IMM;
	wr[0].imm_data = htobe32(0x1234);
	wr[0].sg_list = sge;
	wr[0].num_sge = 2;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].next = &wr[1];
	wr[1].wr_id = 2;
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	wr[1].sg_list = &sge[2];
	wr[1].num_sge = 1;
	wr[1].send_flags = IBV_SEND_INLINE;
	wr[1].wr.rdma.remote_addr = 0xabc000;
	wr[1].wr.rdma.rkey = 99;
	wr[1].next = &wr[2];
	wr[2].wr_id = 3;
	wr[2].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[2].sg_list = sge;
	wr[2].num_sge = 1;
	wr[2].wr.atomic.remote_addr = 0x8000;
	wr[2].wr.atomic.compare_add = 5;
	wr[2].wr.atomic.rkey = 77;

	/* three WQEs across the 2^32 wrap, one doorbell */
	bad = (void *)1;
	CHECK(metaroce_post_send(&qp.vqp.qp, wr, &bad) == 0);
	CHECK(bad == NULL);
	CHECK(qp.sq.ring.hdr->producer == START_INDEX + 3);
	CHECK(doorbells(fds[0], 7) == 1);

	wqe = metaroce_ring_slot(&qp.sq.ring, START_INDEX);
	CHECK((uint8_t *)wqe == qp.sq.ring.slots + 2 * 128);
	CHECK(wqe->wr_id == 1 && wqe->opcode == IBV_WR_SEND_WITH_IMM);
	CHECK(wqe->send_flags == IBV_SEND_SIGNALED);
	CHECK(wqe->ex_imm_data == htobe32(0x1234));
	CHECK(wqe->num_sge == 2 && wqe->inline_len == 0);
	CHECK(wqe->sge[1].addr == 0x2000 && wqe->sge[1].length == 200 &&
	      wqe->sge[1].lkey == 6);

	wqe = metaroce_ring_slot(&qp.sq.ring, START_INDEX + 1);
	CHECK(wqe->wr_id == 2 && wqe->num_sge == 0 && wqe->inline_len == 11);
	CHECK(!memcmp(wqe->inline_data, "hello, ring", 11));
	CHECK(wqe->wr.rdma.remote_addr == 0xabc000 && wqe->wr.rdma.rkey == 99);

	wqe = metaroce_ring_slot(&qp.sq.ring, START_INDEX + 2);
	CHECK((uint8_t *)wqe == qp.sq.ring.slots);	/* wrapped to slot 0 */
	CHECK(wqe->wr_id == 3 && wqe->wr.atomic.compare_add == 5 &&
	      wqe->wr.atomic.rkey == 77 && wqe->wr.atomic.remote_addr == 0x8000);

	/* one slot left: the first WR goes, the second is refused */
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	CHECK(metaroce_post_send(&qp.vqp.qp, wr, &bad) == ENOMEM);
	CHECK(bad == &wr[1]);
	CHECK(qp.sq.ring.hdr->producer == START_INDEX + 4);
	CHECK(doorbells(fds[0], 7) == 1);

	/* full: nothing posted, no doorbell */
	CHECK(metaroce_post_send(&qp.vqp.qp, &wr[1], &bad) == ENOMEM);
	CHECK(bad == &wr[1]);
	CHECK(qp.sq.ring.hdr->producer == START_INDEX + 4);
	CHECK(doorbells(fds[0], 7) == 0);

	/* the "kernel" consumes two; validation errors stop the list */
	qp.sq.ring.hdr->consumer = START_INDEX + 2;
	wr[0].num_sge = 3;				/* > max_sge */
	CHECK(metaroce_post_send(&qp.vqp.qp, wr, &bad) == EINVAL);
	CHECK(bad == &wr[0]);
	wr[0].num_sge = 2;
	sge[2].length = 65;				/* > max_inline */
	CHECK(metaroce_post_send(&qp.vqp.qp, wr, &bad) == EINVAL);
	CHECK(bad == &wr[1]);
	CHECK(qp.sq.ring.hdr->producer == START_INDEX + 5);
	CHECK(doorbells(fds[0], 7) == 1);
	sge[2].length = 11;

	/* UD: only sends, and the AH number goes into the WQE */
	qp.vqp.qp.qp_type = IBV_QPT_UD;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].wr.ud.ah = &ah.ibv_ah;
	wr[1].wr.ud.remote_qpn = 0x11;
	wr[1].wr.ud.remote_qkey = 0x22;
	CHECK(metaroce_post_send(&qp.vqp.qp, &wr[1], &bad) == 0);
	wqe = metaroce_ring_slot(&qp.sq.ring, START_INDEX + 5);
	CHECK(wqe->wr.ud.ah_num == 42 && wqe->wr.ud.remote_qpn == 0x11 &&
	      wqe->wr.ud.remote_qkey == 0x22);
	CHECK(doorbells(fds[0], 7) == 1);
	wr[2].next = NULL;
	CHECK(metaroce_post_send(&qp.vqp.qp, &wr[2], &bad) == EINVAL);

	/* a QP created with no send queue has no ring */
	/* IBA 11.4.1.1: sends before RTS are immediate errors */
	qp.vqp.qp.state = IBV_QPS_RTR;
	CHECK(metaroce_post_send(&qp.vqp.qp, &wr[1], &bad) == EINVAL);
	CHECK(bad == &wr[1]);
	qp.vqp.qp.state = IBV_QPS_RTS;

	qp.sq.ring.hdr = NULL;
	CHECK(metaroce_post_send(&qp.vqp.qp, &wr[1], &bad) == EINVAL);
	CHECK(bad == &wr[1]);
	CHECK(doorbells(fds[0], 7) == 0);

	close(fds[0]);
	close(fds[1]);
	free(mem);
}

static void test_post_recv(void)
{
	struct metaroce_qp qp = {};
	struct metaroce_recv_wqe *wqe;
	struct ibv_recv_wr wr[3] = {}, *bad;
	struct ibv_sge sge = { .addr = 0x5000, .length = 64, .lkey = 9 };
	void *mem;
	int i;

	qp.vqp.qp.state = IBV_QPS_INIT;	/* receives need more than RESET */
	qp.rq.max_sge = 1;
	pthread_spin_init(&qp.rq.lock, PTHREAD_PROCESS_PRIVATE);
	mem = fake_queue(&qp.rq.ring, 2, 32);

	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}

	CHECK(metaroce_post_recv(&qp.vqp.qp, wr, &bad) == ENOMEM);
	CHECK(bad == &wr[2]);
	CHECK(qp.rq.ring.hdr->producer == START_INDEX + 2);
	wqe = metaroce_ring_slot(&qp.rq.ring, START_INDEX + 1);
	CHECK(wqe->wr_id == 101 && wqe->num_sge == 1 &&
	      wqe->sge[0].addr == 0x5000 && wqe->sge[0].lkey == 9);

	qp.rq.ring.hdr->consumer = START_INDEX + 2;
	wr[2].num_sge = 2;
	CHECK(metaroce_post_recv(&qp.vqp.qp, &wr[2], &bad) == EINVAL);
	CHECK(bad == &wr[2]);
	wr[2].num_sge = 1;
	CHECK(metaroce_post_recv(&qp.vqp.qp, &wr[2], &bad) == 0);
	CHECK(bad == NULL);
	CHECK(qp.rq.ring.hdr->producer == START_INDEX + 3);
	wqe = metaroce_ring_slot(&qp.rq.ring, START_INDEX + 2);
	CHECK((uint8_t *)wqe == qp.rq.ring.slots && wqe->wr_id == 102);

	/* a QP on an SRQ has no RQ ring */
	qp.rq.ring.hdr = NULL;
	CHECK(metaroce_post_recv(&qp.vqp.qp, wr, &bad) == EINVAL);
	free(mem);
}

static void test_poll_cq(void)
{
	struct metaroce_cq cq = {};
	struct metaroce_cqe *cqe;
	struct ibv_wc wc[4];
	void *mem;
	int i;

	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);
	mem = fake_queue(&cq.ring, 4, 64);	/* cqe is 56 bytes */

	CHECK(metaroce_poll_cq(&cq.vcq.cq, 4, wc) == 0);

	/* the "kernel" completes three, across the wrap */
	for (i = 0; i < 3; i++) {
		cqe = metaroce_ring_slot(&cq.ring, START_INDEX + i);
		cqe->wr_id = 500 + i;
		cqe->status = i == 2 ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS;
		cqe->opcode = IBV_WC_RECV;
		cqe->byte_len = 1000 + i;
		cqe->ex_imm_data = htobe32(7);
		cqe->qp_num = 0x33;
		cqe->src_qp = 0x44;
		cqe->wc_flags = IBV_WC_WITH_IMM;
		cqe->pkey_index = 1;
		cqe->sl = 3;
	}
	cq.ring.hdr->producer = START_INDEX + 3;

	CHECK(metaroce_poll_cq(&cq.vcq.cq, 2, wc) == 2);
	CHECK(cq.ring.hdr->consumer == START_INDEX + 2);
	CHECK(wc[0].wr_id == 500 && wc[1].wr_id == 501);
	CHECK(wc[1].status == IBV_WC_SUCCESS && wc[1].opcode == IBV_WC_RECV);
	CHECK(wc[1].byte_len == 1001 && wc[1].imm_data == htobe32(7));
	CHECK(wc[1].qp_num == 0x33 && wc[1].src_qp == 0x44 &&
	      wc[1].wc_flags == IBV_WC_WITH_IMM && wc[1].pkey_index == 1 &&
	      wc[1].sl == 3);
	CHECK(metaroce_poll_cq(&cq.vcq.cq, 4, wc) == 1);
	CHECK(wc[0].wr_id == 502 && wc[0].status == IBV_WC_REM_ACCESS_ERR);
	CHECK(cq.ring.hdr->consumer == START_INDEX + 3);
	CHECK(metaroce_poll_cq(&cq.vcq.cq, 4, wc) == 0);

	/* a corrupt producer never makes poll read past the ring */
	cq.ring.hdr->producer = START_INDEX + 3 + 100;
	CHECK(metaroce_poll_cq(&cq.vcq.cq, 8, wc) == 4);
	free(mem);
}

/*
 * IBV_WR_BIND_MW: the new rkey keeps the window's index (ibv_inc_rkey
 * changes the low byte only); one naming another index -- another window
 * of the PD -- is refused at post time, nothing reaches the ring.
 */
static void test_bind_mw_rkey(void)
{
	struct ibv_context ctx = {};
	struct ibv_pd pd = {};
	struct ibv_mw mw = { .pd = &pd, .rkey = 0x1234a7,
			     .type = IBV_MW_TYPE_2 };
	struct ibv_mr mr = { .pd = &pd, .lkey = 0x55aa01 };
	struct metaroce_qp qp = {};
	struct ibv_send_wr wr, *bad = NULL;
	int fds[2];
	void *mem;

	mem = fake_rc_sq(&qp, &ctx, fds);
	qp.vqp.qp.pd = &pd;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = &mw;
	wr.bind_mw.bind_info.mr = &mr;
	wr.bind_mw.bind_info.addr = 0x1000;
	wr.bind_mw.bind_info.length = 64;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;

	/* another index: another window */
	wr.bind_mw.rkey = 0x1235a8;
	CHECK(metaroce_post_send(&qp.vqp.qp, &wr, &bad) == EINVAL);
	CHECK(bad == &wr);
	CHECK(qp.sq.ring.hdr->producer == START_INDEX);

	/* the same index, the next key byte: posted */
	bad = NULL;
	wr.bind_mw.rkey = ibv_inc_rkey(mw.rkey);
	CHECK(metaroce_post_send(&qp.vqp.qp, &wr, &bad) == 0);
	CHECK(qp.sq.ring.hdr->producer == START_INDEX + 1);

	/* ibv_wr_bind_mw: the same rules, the error from ibv_wr_complete */
	metaroce_wr_start(&qp.vqp.qp_ex);
	metaroce_wr_bind_mw(&qp.vqp.qp_ex, &mw, 0x1235a8,
			    &wr.bind_mw.bind_info);
	CHECK(metaroce_wr_complete(&qp.vqp.qp_ex) == EINVAL);
	CHECK(qp.sq.ring.hdr->producer == START_INDEX + 1);
	metaroce_wr_start(&qp.vqp.qp_ex);
	metaroce_wr_bind_mw(&qp.vqp.qp_ex, &mw, ibv_inc_rkey(mw.rkey),
			    &wr.bind_mw.bind_info);
	CHECK(metaroce_wr_complete(&qp.vqp.qp_ex) == 0);
	CHECK(qp.sq.ring.hdr->producer == START_INDEX + 2);
	free(mem);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	test_ring_init();
	test_post_send();
	test_post_recv();
	test_poll_cq();
	test_bind_mw_rkey();

	if (failures) {
		fprintf(stderr, "ring-test: %d check(s) failed\n", failures);
		return 1;
	}
	printf("ring-test: all checks passed\n");
	return 0;
}
