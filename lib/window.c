// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Windows: creation, allocation and release, collective over the group.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rmawin_priv.h"

/* Every rank's length and unit, for the checks of queued operations; NULL if unknown. */
static struct rmawin_win_rank *rmawin_win_ranks(struct rmawin_ep *ep, uint32_t id)
{
	struct rmawin_win_rank *r = calloc(ep->nranks, sizeof(*r));
	struct rmawin_win_info w;

	if (!r)
		return NULL;
	memset(&w, 0, sizeof(w));
	w.win = id;
	w.nranks = ep->nranks;
	w.ranks_ptr = (uintptr_t)r;
	/* an older kernel (-ENOTTY) has none: operations then wait for their results */
	if (rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_WIN_INFO, &w)) {
		free(r);
		return NULL;
	}
	return r;
}

/* Keep @err for @win's next synchronization, unless it has one already. */
static void rmawin_win_keep(struct rmawin_win *win, int err)
{
	int none = 0;

	__atomic_compare_exchange_n(&win->error, &none, err, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

/* The endpoint's window @id, or NULL; @ep->lock held. */
struct rmawin_win *rmawin__win_by_id(struct rmawin_ep *ep, uint32_t id)
{
	struct rmawin_win *win;

	for (win = ep->wins; win && win->id != id; win = win->next)
		;
	return win;
}

/* A queued operation on window @id failed: its window, if still there, says so later. */
void rmawin__win_error(struct rmawin_ep *ep, uint32_t id, int err)
{
	struct rmawin_win *win;

	pthread_mutex_lock(&ep->lock);
	win = rmawin__win_by_id(ep, id);
	if (win)
		rmawin_win_keep(win, err);
	pthread_mutex_unlock(&ep->lock);
}

/* Every window gets @err: queued operations were lost. */
void rmawin__wins_error(struct rmawin_ep *ep, int err)
{
	struct rmawin_win *win;

	pthread_mutex_lock(&ep->lock);
	for (win = ep->wins; win; win = win->next)
		rmawin_win_keep(win, err);
	pthread_mutex_unlock(&ep->lock);
}

int rmawin__win_result(struct rmawin_win *win, int ret)
{
	int err = __atomic_exchange_n(&win->error, 0, __ATOMIC_RELAXED);

	return err ?: ret;
}

static void rmawin_win_unlink(struct rmawin_win *win)
{
	struct rmawin_win **p;

	pthread_mutex_lock(&win->ep->lock);
	for (p = &win->ep->wins; *p; p = &(*p)->next) {
		if (*p == win) {
			*p = win->next;
			break;
		}
	}
	pthread_mutex_unlock(&win->ep->lock);
	rmawin__epoch_free(win);
	free(win->ranks);
}

static int rmawin_win_new(struct rmawin_ep *ep, void *base, size_t size,
			  unsigned int disp_unit, uint32_t flags, struct rmawin_win **winp)
{
	struct rmawin_win_create c;
	struct rmawin_win *win;
	int ret;

	win = calloc(1, sizeof(*win));
	if (!win)
		return -ENOMEM;
	win->ep = ep;
	win->quiet = ~0ULL;
	ret = rmawin__epoch_init(win);
	if (ret) {
		free(win);
		return ret;
	}
	rmawin__ring_drain(ep);
	memset(&c, 0, sizeof(c));
	c.flags = flags;
	if (ep->nic_ints)	/* an older kernel: every same_op window is so */
		c.flags &= ~RMAWIN_WIN_NIC_SMALL_INTS;
	c.base = (uintptr_t)base;
	c.length = size;
	c.disp_unit = disp_unit;
	ret = rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_WIN_CREATE, &c);
	if (ret) {
		rmawin__epoch_free(win);
		free(win);
		return ret;
	}
	win->base = base;
	win->size = size;
	win->disp_unit = disp_unit;
	win->flags = flags;
	win->id = c.win;
	/* the kernel hands out the offset; the pointer is derived from it */
	if (c.mmap_offset && size) {
		win->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ep->fd,
				 c.mmap_offset);
		if (win->base == MAP_FAILED) {
			ret = -errno;
			rmawin__epoch_free(win);
			free(win);	/* the kernel frees the window with the endpoint */
			return ret;
		}
		win->allocated = 1;
	}
	win->ranks = rmawin_win_ranks(ep, win->id);
	pthread_mutex_lock(&ep->lock);
	win->next = ep->wins;
	ep->wins = win;
	pthread_mutex_unlock(&ep->lock);
	*winp = win;
	return 0;
}

/* Flags the library knows; NIC_SMALL_INTS only with SAME_OP. */
static int rmawin_win_flags_bad(unsigned int flags)
{
	if (flags & ~(RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS))
		return 1;
	return (flags & RMAWIN_WIN_NIC_SMALL_INTS) && !(flags & RMAWIN_WIN_SAME_OP);
}

int rmawin_win_create(struct rmawin_ep *ep, void *base, size_t size, unsigned int disp_unit,
		      unsigned int flags, struct rmawin_win **win)
{
	if (!ep || !win || rmawin_win_flags_bad(flags) || !disp_unit || (!base && size))
		return -EINVAL;
	return rmawin_win_new(ep, base, size, disp_unit, flags, win);
}

int rmawin_win_allocate(struct rmawin_ep *ep, size_t size, unsigned int disp_unit,
			unsigned int flags, void **base, struct rmawin_win **win)
{
	int ret;

	if (!ep || !base || !win || rmawin_win_flags_bad(flags) || !disp_unit)
		return -EINVAL;
	ret = rmawin_win_new(ep, NULL, size, disp_unit, flags | RMAWIN_WIN_ALLOCATE, win);
	if (!ret)
		*base = (*win)->base;
	return ret;
}

int rmawin_win_free(struct rmawin_win *win)
{
	struct rmawin_win_free f;
	int ret, late;

	if (!win)
		return -EINVAL;
	/* collective: a noted lock's failure does not keep the others waiting */
	late = rmawin__lazy_settle(win);
	rmawin__ring_drain(win->ep);
	memset(&f, 0, sizeof(f));
	f.win = win->id;
	ret = rmawin__ioctl_struct(win->ep->fd, RMAWIN_IOC_WIN_FREE, &f);
	/* another thread waits on it: nothing was done, it stays */
	if (ret == -EBUSY)
		return ret;
	ret = late ?: rmawin__win_result(win, ret);
	rmawin_win_unlink(win);
	/* the module's pages are freed once this last mapping goes */
	if (win->allocated)
		munmap(win->base, win->size);
	free(win);
	return ret;
}
