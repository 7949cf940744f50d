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
 * pass it routinely (rxe accepts it too).
 */
#define METAROCE_ACCESS_SUPPORTED (IB_ACCESS_LOCAL_WRITE | \
				   IB_ACCESS_REMOTE_WRITE | \
				   IB_ACCESS_REMOTE_READ | \
				   IB_ACCESS_REMOTE_ATOMIC | \
				   IB_ACCESS_MW_BIND)

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

/* Reserve an index (published later by metaroce_mr_publish). */
static int metaroce_mr_key_alloc(struct metaroce_dev *mdev,
				 struct metaroce_mr *mr)
{
	u32 next = get_random_u32_inclusive(1, METAROCE_MR_INDEX_MAX);
	u32 index, key;
	int err;

	/* sparse: about one xarray node (576 bytes) per MR, < a page */
	err = xa_alloc_cyclic_irq(&mdev->mrs, &index, NULL,
				  XA_LIMIT(1, METAROCE_MR_INDEX_MAX),
				  &next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	key = index << 8 | get_random_u8();
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return 0;
}

static void metaroce_mr_publish(struct metaroce_dev *mdev,
				struct metaroce_mr *mr)
{
	xa_store_irq(&mdev->mrs, mr->ibmr.lkey >> 8, mr, GFP_KERNEL);
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

	xa_erase_irq(&mdev->mrs, mr->ibmr.lkey >> 8);
	metaroce_obj_drain(&mr->ref, &mr->done);
	metaroce_mr_free(mdev, mr);
	return 0;
}

/* ------------------------------------------------------- data path */

/* Under the xa_lock: stable against fast-register key/valid changes. */
static struct metaroce_mr *metaroce_mr_lookup(struct metaroce_dev *mdev,
					      struct ib_pd *pd, u32 key)
{
	struct metaroce_mr *mr;
	unsigned long flags;

	xa_lock_irqsave(&mdev->mrs, flags);
	mr = xa_load(&mdev->mrs, key >> 8);
	if (mr && (mr->ibmr.lkey != key || mr->ibmr.pd != pd ||
		   (mr->type == METAROCE_MR_FAST && !mr->valid) ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	xa_unlock_irqrestore(&mdev->mrs, flags);
	return mr;
}

struct metaroce_mr *metaroce_mr_get(struct metaroce_dev *mdev,
				    struct ib_pd *pd, u32 key, bool remote,
				    int access, u64 va, u64 len)
{
	struct metaroce_mr *mr;

	mr = metaroce_mr_lookup(mdev, pd, key);
	if (!mr)
		return ERR_PTR(-ENOENT);

	if ((mr->access & access) != access) {
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
	if (mr->type == METAROCE_MR_FAST && ibmr->pd == pd &&
	    (key >> 8) == (ibmr->lkey >> 8) &&
	    xa_load(&mdev->mrs, key >> 8) == mr) {
		mr->access = access & METAROCE_ACCESS_SUPPORTED;
		ibmr->lkey = key;
		ibmr->rkey = key;
		mr->valid = true;
		err = 0;
	}
	xa_unlock_irqrestore(&mdev->mrs, flags);
	return err;
}

/* Invalidate fast-register MR @key of @pd; with @check, only say if it could. */
static int metaroce_mr_inval(struct metaroce_dev *mdev, struct ib_pd *pd,
			     u32 key, bool check)
{
	struct metaroce_mr *mr;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&mdev->mrs, flags);
	mr = xa_load(&mdev->mrs, key >> 8);
	if (mr && mr->type == METAROCE_MR_FAST && mr->ibmr.pd == pd &&
	    mr->ibmr.rkey == key) {
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
