// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Notified put: a put that also tells the target, through the endpoint's
 * notification queue.  Not implemented yet.
 */
#include <errno.h>

#include "rmawin_priv.h"

int rmawin_put_notify(struct rmawin_win *win, const void *origin, size_t len, int target,
		      size_t target_disp, uint32_t tag)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)len;
	(void)target;
	(void)target_disp;
	(void)tag;
	return -EOPNOTSUPP;
}

int rmawin_notify_wait(struct rmawin_win *win, struct rmawin_notification *n, int timeout_ms)
{
	if (!win || !n)
		return -EINVAL;
	(void)timeout_ms;
	return -EOPNOTSUPP;
}
