// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: memory regions.
 *
 * Keys: lkey == rkey == index << 8 | 8-bit key. The index is the MR's
 * slot in mdev->mrs (1 .. 2^24 - 1), the first free one at or after a
 * random point; the 8-bit part is random too. So one key tells nothing
 * about the others and guessing a live one is impractical (protocol.rst,
 * "Peer validation"), a stale key to a reused index misses but for a
 * 1 in 256 chance (and reuse itself is rare), and fast-register MRs
 * change the 8-bit part on every REG_MR (as their consumer chooses).
 *
 * Translation: DMA MRs address kernel virtual memory directly; user MRs
 * keep one struct page per PAGE_SIZE of their umem; fast-register MRs
 * keep the page list map_mr_sg() built (kernel virtual addresses: the
 * device has no DMA device, so ib_core maps with virtual addresses).
 */
#include <linux/highmem.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "verbs.h"

#define METAROCE_MR_INDEX_MAX	((1U << 24) - 1)

/*
 * IB_ACCESS_MW_BIND: memory windows may be bound to the MR; applications
 * pass it routinely (rxe accepts it too). IB_ZERO_BASED: the consumer
 * registers with iova 0 and addresses the MR by offset, which the
 * iova-based translation does already (windows refuse such MRs).
 */
#define METAROCE_ACCESS_SUPPORTED (IB_ACCESS_LOCAL_WRITE | \
				   IB_ACCESS_REMOTE_WRITE | \
				   IB_ACCESS_REMOTE_READ | \
				   IB_ACCESS_REMOTE_ATOMIC | \
				   IB_ACCESS_MW_BIND | \
				   IB_ZERO_BASED)

/* The window in a mdev->mrs slot, or NULL if it holds an MR (or nothing). */
static struct metaroce_mw *metaroce_xa_mw(void *entry)
{
	return xa_pointer_tag(entry) == METAROCE_XA_MW ?
	       xa_untag_pointer(entry) : NULL;
}

/* Under the xa_lock: unbind @mw from its MR. */
static void metaroce_mw_unbind(struct metaroce_mw *mw)
{
	if (mw->mr)
		mw->mr->num_mw--;
	mw->mr = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
}

static int metaroce_check_access(int access)
{
	/* Optional flags (relaxed ordering) may be ignored. */
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~METAROCE_ACCESS_SUPPORTED)
		return -EOPNOTSUPP;
	/* IBA o10-25.2.1: remote write/atomic needs local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static struct metaroce_mr *metaroce_mr_new(struct ib_pd *pd,
					   enum metaroce_mr_type type,
					   int access)
{
	struct metaroce_dev *mdev = to_mdev(pd->device);
	struct metaroce_mr *mr;

	if (atomic_inc_return(&mdev->num_mr) > METAROCE_MAX_MR) {
		atomic_dec(&mdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&mdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->type = type;
	mr->access = access;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->done);
	mr->ibmr.pd = pd;
	mr->ibmr.device = pd->device;
	return mr;
}

/* Reserve an index (published later); *key gets index << 8 | random. */
static int metaroce_key_alloc(struct metaroce_dev *mdev, u32 *key)
{
	u32 next = get_random_u32_inclusive(1, METAROCE_MR_INDEX_MAX);
	u32 index;
	int err;

	/* sparse: about one xarray node (576 bytes) per MR, < a page */
	err = xa_alloc_cyclic_irq(&mdev->mrs, &index, NULL,
				  XA_LIMIT(1, METAROCE_MR_INDEX_MAX),
				  &next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	*key = index << 8 | get_random_u8();
	return 0;
}

static int metaroce_mr_key_alloc(struct metaroce_dev *mdev,
				 struct metaroce_mr *mr)
{
	u32 key;
	int err;

	err = metaroce_key_alloc(mdev, &key);
	if (err)
		return err;
	mr->key = key;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return 0;
}

static void metaroce_mr_publish(struct metaroce_dev *mdev,
				struct metaroce_mr *mr)
{
	xa_store_irq(&mdev->mrs, mr->key >> 8, mr, GFP_KERNEL);
}

static void metaroce_mr_free(struct metaroce_dev *mdev,
			     struct metaroce_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree(mr->page_list);
	kfree(mr);
	atomic_dec(&mdev->num_mr);
}

struct ib_mr *metaroce_get_dma_mr(struct ib_pd *pd, int access)
{
	struct metaroce_dev *mdev = to_mdev(pd->device);
	struct metaroce_mr *mr;
	int err;

	err = metaroce_check_access(access);
	if (err)
		return ERR_PTR(err);

	mr = metaroce_mr_new(pd, METAROCE_MR_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = metaroce_mr_key_alloc(mdev, mr);
	if (err) {
		metaroce_mr_free(mdev, mr);
		return ERR_PTR(err);
	}
	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;
	metaroce_mr_publish(mdev, mr);
	return &mr->ibmr;
}

struct ib_mr *metaroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				   u64 iova, int access,
				   struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(pd->device);
	struct sg_page_iter iter;
	struct metaroce_mr *mr;
	struct ib_umem *umem;
	u64 end;
	size_t n;
	int err;

	err = metaroce_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!length || length > METAROCE_MAX_MR_SIZE ||
	    check_add_overflow(iova, length, &end) ||
	    check_add_overflow(start, length, &end))
		return ERR_PTR(-EINVAL);

	mr = metaroce_mr_new(pd, METAROCE_MR_USER, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	umem = ib_umem_get(pd->device, start, length, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_free;
	}
	mr->umem = umem;

	n = ib_umem_num_pages(umem);
	if (!n || n > U32_MAX) {
		err = -EINVAL;
		goto err_free;
	}
	mr->pages = kvmalloc_array(n, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_free;
	}
	mr->npages = 0;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (mr->npages == n)
			break;
		mr->pages[mr->npages++] = sg_page_iter_page(&iter);
	}
	if (mr->npages != n) {
		err = -EFAULT;
		goto err_free;
	}
	mr->max_pages = n;
	mr->page_shift = PAGE_SHIFT;
	mr->umem_offset = ib_umem_offset(umem);

	err = metaroce_mr_key_alloc(mdev, mr);
	if (err)
		goto err_free;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	metaroce_mr_publish(mdev, mr);
	return &mr->ibmr;

err_free:
	metaroce_mr_free(mdev, mr);
	return ERR_PTR(err);
}

struct ib_mr *metaroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type mr_type,
				u32 max_num_sg)
{
	struct metaroce_dev *mdev = to_mdev(pd->device);
	struct metaroce_mr *mr;
	int err;

	if (mr_type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > METAROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);

	mr = metaroce_mr_new(pd, METAROCE_MR_FAST, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->page_list = kcalloc(max_num_sg, sizeof(*mr->page_list),
				GFP_KERNEL);
	if (!mr->page_list) {
		err = -ENOMEM;
		goto err_free;
	}
	mr->max_pages = max_num_sg;
	err = metaroce_mr_key_alloc(mdev, mr);
	if (err)
		goto err_free;
	metaroce_mr_publish(mdev, mr);
	return &mr->ibmr;

err_free:
	metaroce_mr_free(mdev, mr);
	return ERR_PTR(err);
}

static int metaroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct metaroce_mr *mr = to_mmr(ibmr);

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	mr->page_list[mr->npages++] = addr;
	return 0;
}

int metaroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		       int sg_nents, unsigned int *sg_offset)
{
	struct metaroce_mr *mr = to_mmr(ibmr);

	if (mr->type != METAROCE_MR_FAST)
		return -EINVAL;
	/* ib_map_mr_sg() set ibmr->page_size; ib_sg_to_pages() needs it. */
	if (!is_power_of_2(ibmr->page_size) || ibmr->page_size < SZ_4K)
		return -EINVAL;
	mr->npages = 0;
	mr->page_shift = ilog2(ibmr->page_size);
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      metaroce_set_page);
}

int metaroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibmr->device);
	struct metaroce_mr *mr = to_mmr(ibmr);

	/* IBA 10.6.7.2: not while memory windows are bound to it. */
	xa_lock_irq(&mdev->mrs);
	if (mr->num_mw) {
		xa_unlock_irq(&mdev->mrs);
		return -EBUSY;
	}
	__xa_erase(&mdev->mrs, mr->key >> 8);
	xa_unlock_irq(&mdev->mrs);
	metaroce_obj_drain(&mr->ref, &mr->done);
	metaroce_mr_free(mdev, mr);
	return 0;
}

/* ---------------------------------------------------- memory windows */

int metaroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibmw->device);
	struct metaroce_mw *mw = to_mmw(ibmw);
	u32 key;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	/* Windows count against the MR limit (they share the key space). */
	if (atomic_inc_return(&mdev->num_mr) > METAROCE_MAX_MR) {
		atomic_dec(&mdev->num_mr);
		return -ENOMEM;
	}
	err = metaroce_key_alloc(mdev, &key);
	if (err) {
		atomic_dec(&mdev->num_mr);
		return err;
	}
	mw->mr = NULL;
	ibmw->rkey = key;
	xa_store_irq(&mdev->mrs, key >> 8, xa_tag_pointer(mw, METAROCE_XA_MW),
		     GFP_KERNEL);
	return 0;
}

int metaroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct metaroce_dev *mdev = to_mdev(ibmw->device);
	struct metaroce_mw *mw = to_mmw(ibmw);

	/* Lookups and binds run under the xa_lock: none is left after. */
	xa_lock_irq(&mdev->mrs);
	__xa_erase(&mdev->mrs, ibmw->rkey >> 8);
	metaroce_mw_unbind(mw);
	xa_unlock_irq(&mdev->mrs);
	atomic_dec(&mdev->num_mr);
	return 0;
}

/*
 * LOCAL_WRITE means nothing for a window but consumers pass it (rdma-core's
 * own tests bind with LOCAL_WRITE | REMOTE_WRITE) and rxe accepts it.
 */
#define METAROCE_MW_ACCESS	(IB_ACCESS_REMOTE_READ |		\
				 IB_ACCESS_REMOTE_WRITE |		\
				 IB_ACCESS_REMOTE_ATOMIC |		\
				 IB_ACCESS_LOCAL_WRITE)

/*
 * Bind the window with new rkey @key (same index, the 8-bit part chosen
 * by the consumer) of @pd to [addr, addr + len) of the MR @lkey, for
 * @access; len 0 unbinds a type 1 window. The checks are IBA's (C10-72..75,
 * o10-37.2.30/40) as rdma_rxe applies them; zero-based windows are not
 * supported.
 */
static int metaroce_mw_bind(struct metaroce_dev *mdev, struct ib_pd *pd,
			    u32 key, u32 lkey, u64 addr, u64 len, u64 access)
{
	struct metaroce_mr *mr = NULL;
	struct metaroce_mw *mw;
	unsigned long flags;
	int err = -EINVAL;
	void *entry;

	if (access & ~(u64)METAROCE_MW_ACCESS)
		return -EINVAL;

	xa_lock_irqsave(&mdev->mrs, flags);
	mw = metaroce_xa_mw(xa_load(&mdev->mrs, key >> 8));
	/* C10-72: the window, the QP (and the MR) share the PD. */
	if (!mw || mw->ibmw.pd != pd)
		goto out;
	if (mw->ibmw.type == IB_MW_TYPE_2 && (mw->mr || !len))
		goto out;	/* o10-37.2.30, o10-37.2.40 */
	if (len) {
		entry = xa_load(&mdev->mrs, lkey >> 8);
		mr = metaroce_xa_mw(entry) ? NULL : entry;
		if (!mr || mr->key != lkey || mr->ibmr.pd != pd ||
		    mr->type != METAROCE_MR_USER)
			goto out;
		if (!(mr->access & IB_ACCESS_MW_BIND) ||
		    (mr->access & IB_ZERO_BASED))
			goto out;	/* C10-73; zero-based MRs: rxe's rule */
		if ((access & (IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_ATOMIC)) &&
		    !(mr->access & IB_ACCESS_LOCAL_WRITE))
			goto out;	/* C10-74 */
		if (addr < mr->ibmr.iova || len > mr->ibmr.length ||
		    addr - mr->ibmr.iova > mr->ibmr.length - len)
			goto out;	/* C10-75 */
	}
	metaroce_mw_unbind(mw);
	mw->ibmw.rkey = key;
	if (mr) {
		mw->mr = mr;
		mr->num_mw++;
		mw->addr = addr;
		mw->length = len;
		mw->access = access;
	}
	err = 0;
out:
	xa_unlock_irqrestore(&mdev->mrs, flags);
	return err;
}

enum ib_wc_status metaroce_mem_local_wqe(struct metaroce_qp *qp, u32 opcode,
					 u32 imm, u32 rkey, u64 remote_addr,
					 u64 compare_add, u64 swap)
{
	struct metaroce_dev *mdev = qp->mdev;
	struct ib_pd *pd = qp->ibqp.pd;

	switch (opcode) {
	case METAROCE_WR_REG_MR:
		if (metaroce_mr_fast_reg(mdev, pd,
					 (struct ib_mr *)(uintptr_t)remote_addr,
					 rkey, (int)compare_add))
			return IB_WC_LOC_QP_OP_ERR;	/* as rdma_rxe */
		return IB_WC_SUCCESS;
	case IB_UVERBS_WR_BIND_MW:
		if (metaroce_mw_bind(mdev, pd, imm, rkey, remote_addr,
				     compare_add, swap))
			return IB_WC_MW_BIND_ERR;
		return IB_WC_SUCCESS;
	default:	/* IB_UVERBS_WR_LOCAL_INV */
		if (metaroce_mr_invalidate(mdev, pd, imm))
			return IB_WC_LOC_PROT_ERR;
		return IB_WC_SUCCESS;
	}
}

/* ------------------------------------------------------- data path */

/* Under the xa_lock: a bound window's checks; 0 or -errno. */
static int metaroce_mw_check(struct metaroce_mw *mw, struct ib_pd *pd,
			     u32 key, int access, u64 va, u64 len)
{
	if (mw->ibmw.rkey != key || mw->ibmw.pd != pd || !mw->mr)
		return -ENOENT;
	if ((mw->access & access) != access)
		return -EACCES;
	if (len && (va < mw->addr || len > mw->length ||
		    va - mw->addr > mw->length - len))
		return -ERANGE;
	return 0;
}

/*
 * Under the xa_lock: stable against fast-register key/valid changes and
 * window binds. A window (remote keys only) is checked here and yields
 * its MR with *window set.
 */
static struct metaroce_mr *metaroce_mr_lookup(struct metaroce_dev *mdev,
					      struct ib_pd *pd, u32 key,
					      bool remote, int access, u64 va,
					      u64 len, bool *window)
{
	struct metaroce_mr *mr;
	struct metaroce_mw *mw;
	unsigned long flags;
	void *entry;
	int err = 0;

	*window = false;
	xa_lock_irqsave(&mdev->mrs, flags);
	entry = xa_load(&mdev->mrs, key >> 8);
	mw = metaroce_xa_mw(entry);
	if (mw) {
		err = remote ? metaroce_mw_check(mw, pd, key, access, va, len) :
			       -ENOENT;
		mr = err ? NULL : mw->mr;
		*window = true;
	} else {
		mr = entry;
		if (mr && (mr->key != key || mr->ibmr.pd != pd ||
			   (mr->type == METAROCE_MR_FAST && !mr->valid)))
			mr = NULL;
	}
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	xa_unlock_irqrestore(&mdev->mrs, flags);
	if (!mr)
		return ERR_PTR(err ? err : -ENOENT);
	return mr;
}

struct metaroce_mr *metaroce_mr_get(struct metaroce_dev *mdev,
				    struct ib_pd *pd, u32 key, bool remote,
				    int access, u64 va, u64 len)
{
	struct metaroce_mr *mr;
	bool window;

	mr = metaroce_mr_lookup(mdev, pd, key, remote, access, va, len,
				&window);
	if (IS_ERR(mr))
		return mr;

	/* A window's rights were checked instead (bound within the MR). */
	if (!window && (mr->access & access) != access) {
		metaroce_mr_put(mr);
		return ERR_PTR(-EACCES);
	}
	if (!len)
		return mr;

	/* [va, va + len) within [iova, iova + length), without overflow. */
	if (va < mr->ibmr.iova || len > mr->ibmr.length ||
	    va - mr->ibmr.iova > mr->ibmr.length - len) {
		metaroce_mr_put(mr);
		return ERR_PTR(-ERANGE);
	}
	/* DMA MRs: the kernel virtual range must not wrap either. */
	if (mr->type == METAROCE_MR_DMA && va + len < va) {
		metaroce_mr_put(mr);
		return ERR_PTR(-ERANGE);
	}
	return mr;
}

void metaroce_mr_put(struct metaroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

int metaroce_mr_fast_reg(struct metaroce_dev *mdev, struct ib_pd *pd,
			 struct ib_mr *ibmr, u32 key, int access)
{
	struct metaroce_mr *mr = to_mmr(ibmr);
	unsigned long flags;
	int err = -EINVAL;

	if (metaroce_check_access(access))
		return -EINVAL;

	xa_lock_irqsave(&mdev->mrs, flags);
	/*
	 * Only a free MR (allocated, or invalidated since its last
	 * registration) is registered, as rdma_rxe's rxe_reg_fast_mr()
	 * does: a REG_MR of a valid one fails and leaves its key, access
	 * and validity as they were.
	 */
	if (mr->type == METAROCE_MR_FAST && !mr->valid && ibmr->pd == pd &&
	    (key >> 8) == (mr->key >> 8) &&
	    xa_load(&mdev->mrs, key >> 8) == mr) {
		mr->access = access & METAROCE_ACCESS_SUPPORTED;
		mr->key = key;	/* ibmr's: the consumer set them already */
		mr->valid = true;
		err = 0;
	}
	xa_unlock_irqrestore(&mdev->mrs, flags);
	return err;
}

/*
 * Invalidate fast-register MR or bound type-2 window @key of @pd; with
 * @check, only say if it could.
 */
static int metaroce_mr_inval(struct metaroce_dev *mdev, struct ib_pd *pd,
			     u32 key, bool check)
{
	struct metaroce_mr *mr;
	struct metaroce_mw *mw;
	unsigned long flags;
	void *entry;
	int err = -EINVAL;

	xa_lock_irqsave(&mdev->mrs, flags);
	entry = xa_load(&mdev->mrs, key >> 8);
	mw = metaroce_xa_mw(entry);
	mr = mw ? NULL : entry;
	if (mw) {
		/* o10-37.2.26: type 1 windows are not invalidated. */
		if (mw->ibmw.type == IB_MW_TYPE_2 && mw->ibmw.pd == pd &&
		    mw->ibmw.rkey == key && mw->mr) {
			if (!check)
				metaroce_mw_unbind(mw);
			err = 0;
		}
	} else if (mr && mr->type == METAROCE_MR_FAST && mr->ibmr.pd == pd &&
		   mr->key == key) {
		if (!check)
			mr->valid = false;
		err = 0;
	}
	xa_unlock_irqrestore(&mdev->mrs, flags);
	return err;
}

int metaroce_mr_invalidate(struct metaroce_dev *mdev, struct ib_pd *pd,
			   u32 key)
{
	return metaroce_mr_inval(mdev, pd, key, false);
}

int metaroce_mr_check_invalidate(struct metaroce_dev *mdev, struct ib_pd *pd,
				 u32 key)
{
	return metaroce_mr_inval(mdev, pd, key, true);
}

/*
 * Kernel address and contiguous length (<= len) of MR byte @va; for
 * USER MRs *page is set and the address is an offset in it.
 */
static void *metaroce_mr_chunk(struct metaroce_mr *mr, u64 va, u32 len,
			       u32 *chunk, struct page **page)
{
	u64 off, psize;
	size_t idx;
	u64 in;

	*page = NULL;
	switch (mr->type) {
	case METAROCE_MR_DMA:
		*chunk = len;
		return (void *)(uintptr_t)va;
	case METAROCE_MR_USER:
		off = va - mr->ibmr.iova + mr->umem_offset;
		idx = off >> PAGE_SHIFT;
		in = off & ~PAGE_MASK;
		*chunk = min_t(u64, len, PAGE_SIZE - in);
		*page = mr->pages[idx];
		return (void *)(uintptr_t)in;
	case METAROCE_MR_FAST:
	default:
		psize = 1ULL << mr->page_shift;
		off = va - mr->ibmr.iova +
		      (mr->ibmr.iova & (psize - 1));
		idx = off >> mr->page_shift;
		in = off & (psize - 1);
		*chunk = min_t(u64, len, psize - in);
		return (void *)(uintptr_t)(mr->page_list[idx] + in);
	}
}

void metaroce_mr_copy(struct metaroce_mr *mr, u64 va, void *buf, u32 len,
		      enum metaroce_copy_dir dir)
{
	struct page *page;
	u32 chunk;
	void *p;

	while (len) {
		p = metaroce_mr_chunk(mr, va, len, &chunk, &page);
		if (page)
			p = kmap_local_page(page) + (uintptr_t)p;
		if (dir == METAROCE_TO_MR)
			memcpy(p, buf, chunk);
		else
			memcpy(buf, p, chunk);
		if (page)
			kunmap_local(p);
		va += chunk;
		buf += chunk;
		len -= chunk;
	}
}

int metaroce_mr_copy_from_skb(struct metaroce_mr *mr, u64 va,
			      const struct sk_buff *skb, u32 offset, u32 len)
{
	struct page *page;
	u32 chunk;
	void *p;
	int err;

	while (len) {
		p = metaroce_mr_chunk(mr, va, len, &chunk, &page);
		if (page)
			p = kmap_local_page(page) + (uintptr_t)p;
		err = skb_copy_bits(skb, offset, p, chunk);
		if (page)
			kunmap_local(p);
		if (err)
			return -EFAULT;
		va += chunk;
		offset += chunk;
		len -= chunk;
	}
	return 0;
}

void metaroce_mr_atomic(struct metaroce_mr *mr, u64 va, bool cmp_swap,
			u64 compare, u64 swap_add, u64 *orig)
{
	struct metaroce_dev *mdev = to_mdev(mr->ibmr.device);
	struct page *page;
	unsigned long flags;
	u32 chunk;
	u64 *p;

	p = metaroce_mr_chunk(mr, va, sizeof(u64), &chunk, &page);
	if (page)
		p = kmap_local_page(page) + (uintptr_t)p;

	spin_lock_irqsave(&mdev->atomic_lock, flags);
	*orig = READ_ONCE(*p);
	if (cmp_swap) {
		if (*orig == compare)
			WRITE_ONCE(*p, swap_add);
	} else {
		WRITE_ONCE(*p, *orig + swap_add);
	}
	spin_unlock_irqrestore(&mdev->atomic_lock, flags);

	if (page)
		kunmap_local(p);
}

int metaroce_sgl_copy(struct metaroce_dev *mdev, struct ib_pd *pd,
		      const struct metaroce_sge *sge, u32 num_sge,
		      u64 offset, void *buf, const struct sk_buff *skb,
		      u32 skb_off, u32 len, enum metaroce_copy_dir dir)
{
	int access = dir == METAROCE_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0;
	struct metaroce_mr *mr;
	u64 total = 0, end;
	u32 i, n;
	int err;

	for (i = 0; i < num_sge; i++)
		total += sge[i].length;	/* <= 2^32 * 2^32: no overflow */
	if (check_add_overflow(offset, (u64)len, &end) || end > total)
		return -EINVAL;

	for (i = 0; i < num_sge && len; i++) {
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		n = min_t(u64, len, sge[i].length - offset);
		mr = metaroce_mr_get(mdev, pd, sge[i].lkey, false, access,
				     sge[i].addr + offset, n);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		if (skb) {
			err = metaroce_mr_copy_from_skb(mr, sge[i].addr + offset,
							skb, skb_off, n);
			skb_off += n;
		} else {
			metaroce_mr_copy(mr, sge[i].addr + offset, buf, n,
					 dir);
			buf += n;
			err = 0;
		}
		metaroce_mr_put(mr);
		if (err)
			return err;
		offset = 0;
		len -= n;
	}
	return 0;
}
