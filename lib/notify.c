// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Notified put: a put that also tells the target, through the endpoint's
 * notification queue (readable on rmawin_ep_fd() while not empty).
 */
#include <errno.h>
#include <string.h>

#include "rmawin_priv.h"

int rmawin_put_notify(struct rmawin_win *win, const void *origin, size_t len, int target,
		      size_t target_disp, uint32_t tag)
{
	struct rmawin_op_desc d;
	int ret = rmawin__rma_desc(win, RMAWIN_OP_PUT_NOTIFY, origin, len, target, target_disp, &d);

	if (ret)
		return ret;
	d.tag = tag;
	/* a lock only noted (lazy.c) is taken first */
	ret = rmawin__lazy_settle(win);
	return ret ?: rmawin__submit(win->ep, &d, 1, win);
}

int rmawin_notify_wait(struct rmawin_win *win, struct rmawin_notification *n, int timeout_ms)
{
	struct rmawin_notify_wait w;
	int ret;

	if (!win || !n || timeout_ms < -1)
		return -EINVAL;
	memset(&w, 0, sizeof(w));
	w.win = win->id;
	w.timeout_ms = timeout_ms;
	ret = rmawin__ioctl_struct(win->ep->fd, RMAWIN_IOC_NOTIFY_WAIT, &w);
	if (ret)
		return ret;
	n->source = w.source;
	n->tag = w.tag;
	n->target_disp = w.target_disp;
	n->len = w.len;
	return 0;
}
