/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: what the three files of a window share and nobody else needs.
 * window.c registers a window and runs its life (create, free), winmem.c
 * pins or allocates its memory, desc.c exchanges its descriptors with the
 * peers.
 */
#ifndef RMAWIN_WINDOW_H
#define RMAWIN_WINDOW_H

#include "rmawin.h"

/* Windows larger than this are refused outright, ours or a peer's. */
#define RMAWIN_WIN_MAX		BIT_ULL(40)

/**
 * struct rmawin_mr_chunk - one fast-registered region of a local window
 * @mr: the memory region
 * @sgt: its pages, DMA-mapped
 */
struct rmawin_mr_chunk {
	struct ib_mr *mr;
	struct sg_table sgt;
};

/**
 * struct rmawin_kmem - pages the module allocated for a window
 * @ref: the window's reference, and one per mapping of them (vm_ops)
 * @pages: @npages zeroed pages; mappings hold their own page references
 * @npages: number of pages
 * @mm: whose RLIMIT_MEMLOCK pays for them (mmgrab'ed), until the last
 *	reference goes
 */
struct rmawin_kmem {
	struct kref ref;
	struct page **pages;
	unsigned long npages;
	struct mm_struct *mm;
};

/* winmem.c */
int rmawin_win_pin(struct rmawin_win *win);
int rmawin_win_alloc_pages(struct rmawin_win *win);
void rmawin_win_unpin(struct rmawin_win *win);

/* desc.c */
int rmawin_win_exchange_descs(struct rmawin_win *win, int status);
void rmawin_table_free(struct rmawin_group *grp, struct rmawin_win_table *tbl);
struct rmawin_remote *rmawin_desc_self(struct rmawin_win *win);
void rmawin_desc_self_free(struct rmawin_remote *r);

/* window.c: the regions' geometry, which the descriptors carry */
u64 rmawin_win_block_off(const struct rmawin_win *win);
u64 rmawin_win_chunk_bytes(const struct rmawin_win *win);

#endif
