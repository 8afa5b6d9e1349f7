// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Windows: creation, allocation and release, collective over the group.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rmawin_priv.h"

static int rmawin_win_new(struct rmawin_ep *ep, void *base, size_t size,
			  unsigned int disp_unit, struct rmawin_win **winp)
{
	struct rmawin_win_create c;
	struct rmawin_win *win;
	int ret;

	win = calloc(1, sizeof(*win));
	if (!win)
		return -ENOMEM;
	memset(&c, 0, sizeof(c));
	c.base = (uintptr_t)base;
	c.length = size;
	c.disp_unit = disp_unit;
	ret = rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_WIN_CREATE, &c);
	if (ret) {
		free(win);
		return ret;
	}
	win->ep = ep;
	win->base = base;
	win->size = size;
	win->disp_unit = disp_unit;
	win->id = c.win;
	*winp = win;
	return 0;
}

int rmawin_win_create(struct rmawin_ep *ep, void *base, size_t size, unsigned int disp_unit,
		      unsigned int flags, struct rmawin_win **win)
{
	if (!ep || !win || flags || !disp_unit || (!base && size))
		return -EINVAL;
	return rmawin_win_new(ep, base, size, disp_unit, win);
}

/*
 * The memory comes from an anonymous mapping of the library's: page
 * aligned and zeroed, as MPI_Win_allocate's usually is.
 */
int rmawin_win_allocate(struct rmawin_ep *ep, size_t size, unsigned int disp_unit,
			unsigned int flags, void **base, struct rmawin_win **win)
{
	void *mem = NULL;
	int ret;

	if (!ep || !base || !win || flags || !disp_unit)
		return -EINVAL;
	if (size) {
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (mem == MAP_FAILED)
			return -ENOMEM;
	}
	ret = rmawin_win_new(ep, mem, size, disp_unit, win);
	if (ret) {
		if (mem)
			munmap(mem, size);
		return ret;
	}
	(*win)->allocated = 1;
	*base = mem;
	return 0;
}

int rmawin_win_free(struct rmawin_win *win)
{
	struct rmawin_win_free f;
	int ret;

	if (!win)
		return -EINVAL;
	memset(&f, 0, sizeof(f));
	f.win = win->id;
	ret = rmawin__ioctl_struct(win->ep->fd, RMAWIN_IOC_WIN_FREE, &f);
	/* the kernel let go of the pages, whatever it reports */
	if (win->allocated && win->size && ret != -ENOENT)
		munmap(win->base, win->size);
	free(win);
	return ret;
}
