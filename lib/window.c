// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Windows: creation, allocation and release, collective over the group.
 * Not implemented yet: the window ioctls do not exist.
 */
#include <errno.h>

#include "rmawin_priv.h"

int rmawin_win_create(struct rmawin_ep *ep, void *base, size_t size, unsigned int disp_unit,
		      unsigned int flags, struct rmawin_win **win)
{
	if (!ep || !win)
		return -EINVAL;
	(void)base;
	(void)size;
	(void)disp_unit;
	(void)flags;
	return -EOPNOTSUPP;
}

int rmawin_win_allocate(struct rmawin_ep *ep, size_t size, unsigned int disp_unit,
			unsigned int flags, void **base, struct rmawin_win **win)
{
	if (!ep || !base || !win)
		return -EINVAL;
	(void)size;
	(void)disp_unit;
	(void)flags;
	return -EOPNOTSUPP;
}

int rmawin_win_free(struct rmawin_win *win)
{
	if (!win)
		return -EINVAL;
	return -EOPNOTSUPP;
}
