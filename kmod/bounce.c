// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: bounce buffers.  Each group has RMAWIN_BOUNCE_SLOTS kernel
 * buffers of RMAWIN_BOUNCE_SIZE bytes, DMA-mapped once when the group is
 * joined: a small put copies its origin into one and posts from it, a
 * small get lands in one and is copied out at reaping.  For small
 * operations a copy is cheaper than pinning and mapping user pages.
 */
#include <linux/slab.h>
#include <linux/bitops.h>

#include "rmawin.h"

/**
 * rmawin_bounce_alloc() - allocate and map the group's bounce buffers
 * @grp: the group, with its device known
 *
 * Return: 0 or -ENOMEM.
 */
int rmawin_bounce_alloc(struct rmawin_group *grp)
{
	u32 i;

	for (i = 0; i < RMAWIN_BOUNCE_SLOTS; i++) {
		grp->bounce_mem[i] = kmalloc(RMAWIN_BOUNCE_SIZE, GFP_KERNEL_ACCOUNT);
		if (!grp->bounce_mem[i])
			return -ENOMEM;
		grp->bounce_dma[i] = ib_dma_map_single(grp->ibdev, grp->bounce_mem[i],
						       RMAWIN_BOUNCE_SIZE,
						       DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(grp->ibdev, grp->bounce_dma[i])) {
			kfree(grp->bounce_mem[i]);
			grp->bounce_mem[i] = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * rmawin_bounce_free() - unmap and free the bounce buffers
 * @grp: the group, with nothing in flight
 */
void rmawin_bounce_free(struct rmawin_group *grp)
{
	u32 i;

	for (i = 0; i < RMAWIN_BOUNCE_SLOTS && grp->bounce_mem[i]; i++) {
		ib_dma_unmap_single(grp->ibdev, grp->bounce_dma[i],
				    RMAWIN_BOUNCE_SIZE, DMA_BIDIRECTIONAL);
		kfree(grp->bounce_mem[i]);
		grp->bounce_mem[i] = NULL;
	}
}

/**
 * rmawin_bounce_get() - take a free bounce buffer
 * @grp: the group
 *
 * Without a lock: the bit is taken with an atomic test-and-set, which
 * orders our use of the buffer after its previous user's put.
 *
 * Context: any.
 * Return: its slot, or -1 if all are busy.
 */
int rmawin_bounce_get(struct rmawin_group *grp)
{
	unsigned long busy;
	int slot;

	do {
		busy = READ_ONCE(grp->bounce_busy);
		if (!~busy)
			return -1;
		slot = ffz(busy);
	} while (test_and_set_bit_lock(slot, &grp->bounce_busy));
	return slot;
}

/**
 * rmawin_bounce_put() - give a bounce buffer back
 * @grp: the group
 * @slot: what rmawin_bounce_get() returned
 */
void rmawin_bounce_put(struct rmawin_group *grp, int slot)
{
	/* release: what we did with the buffer comes before its next user */
	clear_bit_unlock(slot, &grp->bounce_busy);
}
