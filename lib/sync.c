// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Synchronization, with MPI's meaning: fence, post/start/complete/wait/test
 * (active target) and lock/unlock/flush/sync (passive target).  Not
 * implemented yet.
 */
#include <errno.h>
#include <string.h>

#include "rmawin_priv.h"

int rmawin_fence(struct rmawin_win *win, unsigned int assert_flags)
{
	struct rmawin_fence f;

	if (!win)
		return -EINVAL;
	memset(&f, 0, sizeof(f));
	f.flags = assert_flags;
	f.win = win->id;
	return rmawin__ioctl_struct(win->ep->fd, RMAWIN_IOC_FENCE, &f);
}

int rmawin_post(struct rmawin_win *win, const int *origins, int n)
{
	if (!win)
		return -EINVAL;
	(void)origins;
	(void)n;
	return -EOPNOTSUPP;
}

int rmawin_start(struct rmawin_win *win, const int *targets, int n)
{
	if (!win)
		return -EINVAL;
	(void)targets;
	(void)n;
	return -EOPNOTSUPP;
}

int rmawin_complete(struct rmawin_win *win)
{
	return win ? -EOPNOTSUPP : -EINVAL;
}

int rmawin_wait(struct rmawin_win *win)
{
	return win ? -EOPNOTSUPP : -EINVAL;
}

int rmawin_test(struct rmawin_win *win)
{
	return win ? -EOPNOTSUPP : -EINVAL;
}

int rmawin_lock(struct rmawin_win *win, enum rmawin_lock_type type, int target)
{
	if (!win)
		return -EINVAL;
	(void)type;
	(void)target;
	return -EOPNOTSUPP;
}

int rmawin_unlock(struct rmawin_win *win, int target)
{
	if (!win)
		return -EINVAL;
	(void)target;
	return -EOPNOTSUPP;
}

int rmawin_lock_all(struct rmawin_win *win)
{
	return win ? -EOPNOTSUPP : -EINVAL;
}

int rmawin_unlock_all(struct rmawin_win *win)
{
	return win ? -EOPNOTSUPP : -EINVAL;
}

int rmawin_flush(struct rmawin_win *win, int target)
{
	if (!win)
		return -EINVAL;
	(void)target;
	return -EOPNOTSUPP;
}

int rmawin_flush_all(struct rmawin_win *win)
{
	return win ? -EOPNOTSUPP : -EINVAL;
}

int rmawin_flush_local(struct rmawin_win *win, int target)
{
	if (!win)
		return -EINVAL;
	(void)target;
	return -EOPNOTSUPP;
}

int rmawin_flush_local_all(struct rmawin_win *win)
{
	return win ? -EOPNOTSUPP : -EINVAL;
}

int rmawin_sync(struct rmawin_win *win)
{
	return win ? -EOPNOTSUPP : -EINVAL;
}
