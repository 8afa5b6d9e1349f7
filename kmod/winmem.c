// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: a window's memory.  Either the caller's own pages, pinned for as
 * long as the window exists (FOLL_LONGTERM), or, with RMAWIN_WIN_ALLOCATE,
 * zeroed pages the module allocates and the process maps with mmap().
 * Both are charged to the caller's RLIMIT_MEMLOCK before anything is
 * allocated for them; allocated pages are charged to its memory cgroup
 * too, and outlive the window only as long as a mapping holds them, still
 * charged.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>

#include "window.h"

/*
 * Charge @npages to the caller's RLIMIT_MEMLOCK, as every pinning driver
 * does.  CAP_IPC_LOCK lifts the limit but not the machine's size: more
 * pages than it has can never be pinned or allocated, and are refused
 * before anything (the page array among them) is sized by them.
 */
static int rmawin_win_charge(struct rmawin_win *win)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (win->npages > totalram_pages() ||
	    win->npages > INT_MAX / sizeof(*win->pages))
		return -ENOMEM;

	win->mm = current->mm;
	mmgrab(win->mm);
	if (atomic64_add_return(win->npages, &win->mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(win->npages, &win->mm->pinned_vm);
		mmdrop(win->mm);
		win->mm = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void rmawin_win_uncharge(struct rmawin_win *win)
{
	atomic64_sub(win->npages, &win->mm->pinned_vm);
	mmdrop(win->mm);
	win->mm = NULL;
}

int rmawin_win_pin(struct rmawin_win *win)
{
	unsigned long first = win->base >> PAGE_SHIFT;
	unsigned long done = 0;
	int ret;

	win->npages = ((win->base + win->length - 1) >> PAGE_SHIFT) - first + 1;
	/* charged before anything is allocated for it */
	ret = rmawin_win_charge(win);
	if (ret) {
		win->npages = 0;
		return ret;
	}
	win->pages = kvcalloc(win->npages, sizeof(*win->pages), GFP_KERNEL_ACCOUNT);
	if (!win->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}

	while (done < win->npages) {
		ret = pin_user_pages_fast((first + done) << PAGE_SHIFT,
					  win->npages - done,
					  FOLL_WRITE | FOLL_LONGTERM,
					  win->pages + done);
		if (ret <= 0) {
			ret = ret ?: -EFAULT;
			goto err_unpin;
		}
		done += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
	}
	rmawin_count(win->ep, RMAWIN_CNT_PINNED_PAGES, win->npages);
	return 0;

err_unpin:
	unpin_user_pages(win->pages, done);
	kvfree(win->pages);
	win->pages = NULL;
err_uncharge:
	rmawin_win_uncharge(win);
	win->npages = 0;
	return ret;
}

/*
 * The last reference: the window's or a mapping's.  The pages, and the
 * RLIMIT_MEMLOCK charge that paid for them, go together.
 */
static void rmawin_kmem_free(struct kref *ref)
{
	struct rmawin_kmem *kmem = container_of(ref, struct rmawin_kmem, ref);
	unsigned long i;

	for (i = 0; kmem->pages && i < kmem->npages; i++)
		if (kmem->pages[i])
			put_page(kmem->pages[i]);
	kvfree(kmem->pages);
	if (kmem->mm) {
		atomic64_sub(kmem->npages, &kmem->mm->pinned_vm);
		mmdrop(kmem->mm);
	}
	kfree(kmem);
}

/* RMAWIN_WIN_ALLOCATE: zeroed pages of ours, mapped by the process later. */
int rmawin_win_alloc_pages(struct rmawin_win *win)
{
	struct rmawin_kmem *kmem;
	unsigned long i;
	int ret;

	win->npages = DIV_ROUND_UP(win->length, PAGE_SIZE);
	ret = rmawin_win_charge(win);
	if (ret)
		goto err_zero;
	kmem = kzalloc(sizeof(*kmem), GFP_KERNEL_ACCOUNT);
	if (!kmem)
		goto err_uncharge;
	kref_init(&kmem->ref);
	kmem->npages = win->npages;
	kmem->pages = kvcalloc(kmem->npages, sizeof(*kmem->pages), GFP_KERNEL_ACCOUNT);
	if (!kmem->pages)
		goto err_put;
	for (i = 0; i < kmem->npages; i++) {
		/* the process's memory cgroup pays for its window */
		kmem->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!kmem->pages[i])
			goto err_put;
	}
	ret = xa_insert(&win->ep->kmems, win->id, kmem, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_put_ret;
	win->kmem = kmem;
	win->pages = kmem->pages;
	/* the charge lasts as long as the pages: until the last mapping goes */
	kmem->mm = win->mm;
	win->mm = NULL;
	rmawin_count(win->ep, RMAWIN_CNT_PINNED_PAGES, win->npages);
	return 0;

err_put:
	ret = -ENOMEM;
err_put_ret:
	kref_put(&kmem->ref, rmawin_kmem_free);
	rmawin_win_uncharge(win);
	goto err_zero;
err_uncharge:
	rmawin_win_uncharge(win);
	ret = -ENOMEM;
err_zero:
	win->npages = 0;
	return ret;
}

void rmawin_win_unpin(struct rmawin_win *win)
{
	if (!win->pages)
		return;
	if (win->kmem) {
		xa_erase(&win->ep->kmems, win->id);
		kref_put(&win->kmem->ref, rmawin_kmem_free);
		win->kmem = NULL;
	} else {
		/* the peers may have written anywhere in it */
		unpin_user_pages_dirty_lock(win->pages, win->npages, true);
		kvfree(win->pages);
		rmawin_win_uncharge(win);
	}
	rmawin_count(win->ep, RMAWIN_CNT_PINNED_PAGES, -(long)win->npages);
	win->pages = NULL;
}

/* A mapping of an allocated window holds its pages, and their charge. */
static void rmawin_kmem_vm_open(struct vm_area_struct *vma)
{
	struct rmawin_kmem *kmem = vma->vm_private_data;

	kref_get(&kmem->ref);
}

static void rmawin_kmem_vm_close(struct vm_area_struct *vma)
{
	struct rmawin_kmem *kmem = vma->vm_private_data;

	kref_put(&kmem->ref, rmawin_kmem_free);
}

static const struct vm_operations_struct rmawin_kmem_vm_ops = {
	.open = rmawin_kmem_vm_open,
	.close = rmawin_kmem_vm_close,
};

/**
 * rmawin_win_mmap() - map an allocated window's pages
 * @ep: the endpoint
 * @vma: a shared mapping at the window's mmap_offset, at most its size
 *
 * Context: mmap_lock held; does not take the endpoint's lock, which is
 * held while faulting user memory in.
 * Return: 0, -EINVAL for a private mapping, an unknown offset or a size
 * beyond the window, or the error of vm_insert_page().
 */
int rmawin_win_mmap(struct rmawin_ep *ep, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct rmawin_kmem *kmem;
	unsigned long i;
	int ret = 0;

	if (!(vma->vm_flags & VM_SHARED) || !(off >> 32) || (u32)off)
		return -EINVAL;
	xa_lock(&ep->kmems);
	kmem = xa_load(&ep->kmems, (off >> 32) - 1);
	if (kmem)
		kref_get(&kmem->ref);
	xa_unlock(&ep->kmems);
	if (!kmem)
		return -EINVAL;
	if (vma_pages(vma) > kmem->npages) {
		ret = -EINVAL;
		goto out_put;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	for (i = 0; i < vma_pages(vma) && !ret; i++)
		ret = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE, kmem->pages[i]);
	if (ret)
		goto out_put;
	/*
	 * Our reference goes with the mapping, and with every copy or part
	 * of it (fork, a partial munmap): the window's pages stay charged
	 * to RLIMIT_MEMLOCK while any process can reach them.
	 */
	vma->vm_private_data = kmem;
	vma->vm_ops = &rmawin_kmem_vm_ops;
	return 0;
out_put:
	kref_put(&kmem->ref, rmawin_kmem_free);
	return ret;
}
