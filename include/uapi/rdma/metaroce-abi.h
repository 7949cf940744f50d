/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * metaroce user/kernel ABI.
 *
 * Shared verbatim by metaroce.ko and the rdma-core provider
 * (libmetaroce-rdmav34.so). Everything here is fixed-size and
 * naturally aligned; the layout is the same on 32- and 64-bit user space.
 *
 * Fast path: CQs, receive queues, SRQs and send queues live in memory
 * allocated by the kernel and mmap'd into the process (see struct
 * metaroce_queue). The provider polls CQs and posts receives with no
 * system call; post_send writes WQEs into the send queue and rings one
 * doorbell (a POST_SEND command with no work requests) per call.
 */
#ifndef METAROCE_ABI_USER_H
#define METAROCE_ABI_USER_H

#include <linux/types.h>

/* Bumped on any incompatible change to this file. */
#define METAROCE_UVERBS_ABI_VERSION	1

/*
 * Reported as the device's driver_id (enum rdma_driver_id is open-ended
 * and this value is far from the in-tree range), so libibverbs matches
 * the metaroce provider and never librxe.
 */
#define METAROCE_DRIVER_ID		0x4d52	/* "MR" */

/* Vendor identity shown by ibv_devinfo. */
#define METAROCE_VENDOR_ID		0x4d5243	/* "MRC" */
#define METAROCE_VENDOR_PART_ID		0x0001

/* ---------------------------------------------------------------------
 * mmap'd queues
 *
 * Every queue is one mapping: a header page (struct metaroce_queue)
 * followed by num_slots slots of slot_size bytes each. Indices are
 * free-running 32-bit counters; slot = index & (num_slots - 1). A queue
 * is empty when producer == consumer and full when
 * producer - consumer == num_slots. Each side writes only its own index,
 * with release semantics after filling a slot, and reads the other's
 * with acquire semantics. The kernel never trusts a value it reads from
 * a user-writable index or slot: it bounds-checks and copies first.
 */
struct metaroce_queue {
	__u32 producer;
	__u32 pad0[15];		/* own cache line */
	__u32 consumer;
	__u32 pad1[15];		/* own cache line */
	__u32 num_slots;	/* power of two, set by the kernel */
	__u32 slot_size;	/* bytes, multiple of 16, set by the kernel */
	__u32 flags;		/* METAROCE_QUEUE_F_* */
	__u32 pad2[13];
};

#define METAROCE_QUEUE_HDR_SIZE		4096	/* slots start here */

/* Kernel sets this on a CQ that overflowed (also raised as async event). */
#define METAROCE_QUEUE_F_OVERFLOW	(1U << 0)

/* Where to mmap a queue: pass offset to mmap(2) on the context's cmd_fd. */
struct metaroce_mmap_info {
	__aligned_u64 offset;
	__u32 size;		/* whole mapping, header included */
	__u32 reserved;
};

/* Scatter/gather element as stored in WQEs. */
struct metaroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * Completion queue entry (kernel -> user). status and opcode use the
 * ib_uverbs / ibv_wc numbering (enum ibv_wc_status, enum ibv_wc_opcode).
 */
struct metaroce_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 ex_imm_data;	/* network byte order, as ibv_wc.imm_data */
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;		/* IBV_WC_GRH, IBV_WC_WITH_IMM, ... */
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 reserved0;
	__u32 reserved1;
	__u32 reserved2;
};

/* Receive WQE (user -> kernel), in RQ and SRQ slots. */
struct metaroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct metaroce_sge sge[];
};

/*
 * Send WQE (user -> kernel), in SQ slots. opcode uses the ibv_wr_opcode
 * numbering (enum ib_uverbs_wr_opcode) and send_flags enum ibv_send_flags.
 * With IBV_SEND_INLINE, inline_len bytes of payload follow the header in
 * place of the SGE list.
 *
 * IBV_WR_BIND_MW (type 1 windows through ibv_bind_mw, type 2 through
 * IBV_WR_BIND_MW / ibv_wr_bind_mw) uses wr.atomic: remote_addr = the
 * window's address, compare_add = its length (0: unbind a type 1 window),
 * swap = its access (IBV_ACCESS_REMOTE_*), rkey = the MR's lkey; and
 * ex_imm_data = the window's new rkey (same index as the one alloc_mw
 * returned, the low 8 bits the consumer's). No SGEs.
 */
struct metaroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;
	__u32 inline_len;
	__u32 ex_imm_data;	/* imm_data (network order) or invalidate rkey */
	__u32 reserved0;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah_num;	/* from metaroce_create_ah_resp */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		__u8 raw[32];
	} wr;
	union {
		struct metaroce_sge sge[0];
		__u8 inline_data[0];
	};
};

/* ---------------------------------------------------------------------
 * Command private data (udata)
 */
struct metaroce_alloc_context_resp {
	__u32 abi_version;	/* METAROCE_UVERBS_ABI_VERSION */
	__u32 caps;		/* METAROCE_CAP_* */
	__u32 max_inline_data;
	__u32 reserved;
};

#define METAROCE_CAP_USER_QUEUES	(1U << 0)	/* mmap'd fast path */

struct metaroce_create_cq_resp {
	struct metaroce_mmap_info mi;
};

struct metaroce_create_qp_resp {
	struct metaroce_mmap_info rq_mi;	/* size 0 when an SRQ is used */
	struct metaroce_mmap_info sq_mi;
};

struct metaroce_create_srq_resp {
	struct metaroce_mmap_info mi;
	__u32 srq_num;
	__u32 reserved;
};

struct metaroce_modify_srq_cmd {
	__aligned_u64 mmap_info_addr;	/* where to write a new mmap_info */
};

struct metaroce_resize_cq_cmd {
	__aligned_u64 mmap_info_addr;
};

struct metaroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

#endif /* METAROCE_ABI_USER_H */
