// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Communication: put, get and the accumulate family.  Nonblocking; each
 * completes at the next synchronization.  Not implemented yet.
 */
#include <errno.h>

#include "rmawin_priv.h"

int rmawin_put(struct rmawin_win *win, const void *origin, size_t len, int target,
	       size_t target_disp)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)len;
	(void)target;
	(void)target_disp;
	return -EOPNOTSUPP;
}

int rmawin_get(struct rmawin_win *win, void *origin, size_t len, int target,
	       size_t target_disp)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)len;
	(void)target;
	(void)target_disp;
	return -EOPNOTSUPP;
}

int rmawin_accumulate(struct rmawin_win *win, const void *origin, size_t count,
		      enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)count;
	(void)type;
	(void)target;
	(void)target_disp;
	(void)op;
	return -EOPNOTSUPP;
}

int rmawin_get_accumulate(struct rmawin_win *win, const void *origin, void *result,
			  size_t count, enum rmawin_type type, int target, size_t target_disp,
			  enum rmawin_op op)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)result;
	(void)count;
	(void)type;
	(void)target;
	(void)target_disp;
	(void)op;
	return -EOPNOTSUPP;
}

int rmawin_fetch_and_op(struct rmawin_win *win, const void *origin, void *result,
			enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)result;
	(void)type;
	(void)target;
	(void)target_disp;
	(void)op;
	return -EOPNOTSUPP;
}

int rmawin_compare_and_swap(struct rmawin_win *win, const void *origin, const void *compare,
			    void *result, enum rmawin_type type, int target, size_t target_disp)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)compare;
	(void)result;
	(void)type;
	(void)target;
	(void)target_disp;
	return -EOPNOTSUPP;
}
