// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: rings (struct metaroce_queue + slots) in vmalloc_user()
 * memory, and their export to user space through rdma_user_mmap_entry.
 *
 * A user ring's memory belongs to its mmap entry once exported: it is
 * freed by metaroce_mmap_free() when the object is gone and the last
 * mapping of it is closed, so a process can never see freed pages.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "verbs.h"

struct metaroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *addr;
};

static struct metaroce_mmap_entry *
to_mentry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct metaroce_mmap_entry, rdma);
}

/**
 * metaroce_ring_alloc - allocate a zeroed ring
 * @r: ring to fill (its lock is initialised here)
 * @min_slots: at least this many slots (rounded up to a power of two; 0
 *	counts as 1)
 * @slot_size: bytes per slot, a multiple of 16
 *
 * Return: 0, -EINVAL for an absurd geometry, -ENOMEM.
 */
int metaroce_ring_alloc(struct metaroce_ring *r, u32 min_slots,
			u32 slot_size)
{
	size_t bytes;
	u32 n;

	memset(r, 0, sizeof(*r));
	spin_lock_init(&r->lock);

	if (!slot_size || slot_size % 16 || min_slots > (1U << 24))
		return -EINVAL;
	n = roundup_pow_of_two(max_t(u32, min_slots, 1));
	if (check_mul_overflow((size_t)n, (size_t)slot_size, &bytes) ||
	    check_add_overflow(bytes, (size_t)METAROCE_QUEUE_HDR_SIZE, &bytes))
		return -EINVAL;
	bytes = PAGE_ALIGN(bytes);
	/* metaroce_mmap_info.size is 32 bits. */
	if (bytes > U32_MAX)
		return -EINVAL;

	r->q = vmalloc_user(bytes);
	if (!r->q)
		return -ENOMEM;
	r->size = bytes;
	r->num_slots = n;
	r->slot_size = slot_size;
	r->q->num_slots = n;
	r->q->slot_size = slot_size;
	return 0;
}

/**
 * metaroce_ring_free - release a ring (NULL ring memory is fine)
 * @r: ring
 *
 * An exported ring's memory stays until user space unmaps it.
 */
void metaroce_ring_free(struct metaroce_ring *r)
{
	if (r->mmap_entry)
		rdma_user_mmap_entry_remove(r->mmap_entry);
	else
		vfree(r->q);
	r->mmap_entry = NULL;
	r->q = NULL;
}

void metaroce_ring_swap(struct metaroce_ring *dst, struct metaroce_ring *src)
{
	swap(dst->q, src->q);
	swap(dst->size, src->size);
	swap(dst->num_slots, src->num_slots);
	swap(dst->slot_size, src->slot_size);
	swap(dst->mmap_entry, src->mmap_entry);
	swap(dst->prod, src->prod);
	swap(dst->cons, src->cons);
}

/**
 * metaroce_ring_export - make @r mmap-able by the process owning @uctx
 * @mdev: device
 * @uctx: user context
 * @r: freshly allocated ring, not yet exported
 * @mi: filled with the mmap offset and size
 *
 * Return: 0 or a negative errno; on error @r is unchanged.
 */
int metaroce_ring_export(struct metaroce_dev *mdev,
			 struct ib_ucontext *uctx, struct metaroce_ring *r,
			 struct metaroce_mmap_info *mi)
{
	struct metaroce_mmap_entry *e;
	int err;

	if (WARN_ON_ONCE(r->mmap_entry || !r->q))
		return -EINVAL;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->addr = r->q;

	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, r->size);
	if (err) {
		kfree(e);
		return err;
	}
	r->mmap_entry = &e->rdma;

	mi->offset = rdma_user_mmap_get_offset(&e->rdma);
	mi->size = r->size;
	mi->reserved = 0;
	return 0;
}

int metaroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *re;
	int err;

	/* NULL unless the VMA covers exactly the whole entry. */
	re = rdma_user_mmap_entry_get(ibuc, vma);
	if (!re)
		return -EINVAL;

	err = remap_vmalloc_range(vma, to_mentry(re)->addr, 0);
	rdma_user_mmap_entry_put(re);
	return err;
}

/* The object is gone and so is the last mapping: free the ring. */
void metaroce_mmap_free(struct rdma_user_mmap_entry *re)
{
	struct metaroce_mmap_entry *e = to_mentry(re);

	vfree(e->addr);
	kfree(e);
}
