// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: address handles and address vectors.
 *
 * An AV is the pair of IP endpoints of the GIDs (IPv4-mapped GIDs give
 * AF_INET) plus the GRH fields the transport copies into its IP header.
 * AHs are numbered (mdev->ahs) so user UD WQEs can name them.
 */
#include <linux/slab.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "verbs.h"

#define METAROCE_AH_NUM_MAX	((1U << 24) - 1)

static void metaroce_gid_to_av_addr(const union ib_gid *gid, int *family,
				    struct in_addr *v4, struct in6_addr *v6)
{
	if (ipv6_addr_v4mapped((const struct in6_addr *)gid)) {
		*family = AF_INET;
		memcpy(&v4->s_addr, &gid->raw[12], 4);
	} else {
		*family = AF_INET6;
		memcpy(v6, gid->raw, sizeof(*v6));
	}
}

int metaroce_av_from_attr(struct metaroce_dev *mdev, struct metaroce_av *av,
			  const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid;
	int sfam, dfam;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    attr->type != RDMA_AH_ATTR_TYPE_ROCE)
		return -EINVAL;
	if (rdma_ah_get_port_num(attr) != METAROCE_PORT)
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid = grh->sgid_attr;
	/* ib_core resolves sgid_index into sgid_attr for every caller. */
	if (!sgid || sgid->device != &mdev->ibdev ||
	    sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	metaroce_gid_to_av_addr(&sgid->gid, &sfam, &av->saddr.v4,
				&av->saddr.v6);
	metaroce_gid_to_av_addr(&grh->dgid, &dfam, &av->daddr.v4,
				&av->daddr.v6);
	if (sfam != dfam)
		return -EINVAL;
	if (dfam == AF_INET6 && ipv6_addr_any(&av->daddr.v6))
		return -EINVAL;
	if (dfam == AF_INET && !av->daddr.v4.s_addr)
		return -EINVAL;

	av->family = dfam;
	av->tos = grh->traffic_class;
	av->ttl = grh->hop_limit;
	av->flow_label = grh->flow_label & 0xfffff;
	av->sgid_index = grh->sgid_index;
	av->dgid = grh->dgid;
	return 0;
}

void metaroce_av_to_attr(const struct metaroce_av *av,
			 struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, METAROCE_PORT);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->ttl, av->tos);
}

int metaroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		       struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibah->device);
	struct metaroce_ah *ah = to_mah(ibah);
	struct metaroce_create_ah_resp resp = {};
	gfp_t gfp = (init->flags & RDMA_CREATE_AH_SLEEPABLE) ?
		    GFP_KERNEL : GFP_ATOMIC;
	int err;

	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	ah->av = kmalloc(sizeof(*ah->av), gfp);
	if (!ah->av)
		return -ENOMEM;
	refcount_set(&ah->av->ref, 1);
	err = metaroce_av_from_attr(mdev, &ah->av->av, init->ah_attr);
	if (err)
		goto err_av;

	if (atomic_inc_return(&mdev->num_ah) > METAROCE_MAX_AH) {
		err = -ENOMEM;
		goto err_count;
	}

	/* Reserve the number; publish once the AH is complete. */
	err = xa_alloc_cyclic_irq(&mdev->ahs, &ah->ah_num, NULL,
				  XA_LIMIT(1, METAROCE_AH_NUM_MAX),
				  &mdev->ah_next, gfp);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_count;
	}

	if (udata) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_xa;
	}
	xa_store_irq(&mdev->ahs, ah->ah_num, ah, gfp);
	return 0;

err_xa:
	xa_erase_irq(&mdev->ahs, ah->ah_num);
err_count:
	atomic_dec(&mdev->num_ah);
err_av:
	kfree(ah->av);
	ah->av = NULL;
	return err;
}

int metaroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	metaroce_av_to_attr(&to_mah(ibah)->av->av, attr);
	return 0;
}

/*
 * Never waits, so callable in any context (RDMA_DESTROY_AH_SLEEPABLE or
 * not): once the number is unpublished no new packet takes the AV, and
 * the packets built already hold their own reference to it.
 */
int metaroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct metaroce_dev *mdev = to_mdev(ibah->device);
	struct metaroce_ah *ah = to_mah(ibah);

	xa_erase_irq(&mdev->ahs, ah->ah_num);
	metaroce_ah_av_put(ah->av);
	ah->av = NULL;
	atomic_dec(&mdev->num_ah);
	return 0;
}

struct metaroce_ah_av *metaroce_ah_av_get(struct metaroce_dev *mdev,
					  struct ib_pd *pd, u32 ah_num)
{
	struct metaroce_ah_av *av = NULL;
	struct metaroce_ah *ah;
	unsigned long flags;

	/* under the lock that destroy_ah's erase takes: the AH is alive */
	xa_lock_irqsave(&mdev->ahs, flags);
	ah = xa_load(&mdev->ahs, ah_num);
	if (ah && ah->ibah.pd == pd) {
		av = ah->av;
		refcount_inc(&av->ref);
	}
	xa_unlock_irqrestore(&mdev->ahs, flags);
	return av;
}

void metaroce_ah_av_put(struct metaroce_ah_av *av)
{
	if (refcount_dec_and_test(&av->ref))
		kfree(av);
}
