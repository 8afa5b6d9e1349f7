// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * rmawin_strerror(): what an error means for this library.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "rmawin_priv.h"

static const struct {
	int err;
	const char *msg;
} rmawin_errors[] = {
	{ EOPNOTSUPP, "operation not supported by this version of librmawin" },
	{ ENODEV, "no such RDMA device, or it was removed" },
	{ E2BIG, "request has fields the kernel module does not know: library newer than module?" },
	{ EINVAL, "invalid argument, flag or address" },
	{ ERANGE, "target displacement or length outside the target window" },
	{ ETIMEDOUT, "timed out waiting for a peer" },
	{ ECONNRESET, "connection to a peer lost: the peer exited or its link went down" },
	{ ENETDOWN, "no active port on the RDMA device: link down" },
	{ EBUSY, "busy: endpoint already bound, or a conflicting epoch or lock in progress" },
	{ ENOMEM, "out of memory, or RLIMIT_MEMLOCK exceeded pinning memory" },
	{ EPERM, "operation not permitted on this endpoint or window" },
	{ EFAULT, "bad address: a buffer is not mapped in this process" },
	{ ENOTTY, "/dev/rmawin does not support this request: kernel module too old?" },
	{ ENOENT, "/dev/rmawin not found: is the rmawin kernel module loaded?" },
	{ EACCES, "permission denied opening /dev/rmawin" },
	{ ENAMETOOLONG, "RDMA device name too long" },
	{ ENOKEY, "no job key: a group of more than one rank needs one (RMAWIN_JOB_KEY)" },
	{ EKEYREJECTED, "a peer failed to prove it holds the job key in time (another job on these addresses, or a handshake the network cut short?)" },
	{ EPROTO, "a peer broke the protocol and was cut off" },
	{ EOVERFLOW, "notifications were lost: a sender outran the notification queue" },
	{ ECONNREFUSED, "a peer refused the connection: another group on these addresses" },
	{ EFBIG, "window needs more memory regions than a peer accepts" },
};

/* strerror() is not thread-safe; strerror_r() is, into a buffer per thread. */
static __thread char rmawin_errbuf[128];

/*
 * strerror_r() is the XSI one (returns int) or the GNU one (returns a
 * pointer that may or may not be the buffer), depending on the C library
 * and feature macros; let the compiler pick by its return type.
 */
static const char *rmawin_strerror_r_gnu(char *ret, char *buf)
{
	(void)buf;
	return ret;
}

static const char *rmawin_strerror_r_xsi(int ret, char *buf)
{
	return ret ? NULL : buf;
}

#define rmawin_strerror_r_result(ret, buf)				\
	_Generic((ret), char *: rmawin_strerror_r_gnu,			\
			default: rmawin_strerror_r_xsi)((ret), (buf))

const char *rmawin_strerror(int err)
{
	const char *msg;
	size_t i;

	if (err == INT_MIN)
		goto unknown;
	if (err < 0)
		err = -err;
	if (!err)
		return "success";

	for (i = 0; i < sizeof(rmawin_errors) / sizeof(rmawin_errors[0]); i++)
		if (rmawin_errors[i].err == err)
			return rmawin_errors[i].msg;

	msg = rmawin_strerror_r_result(strerror_r(err, rmawin_errbuf, sizeof(rmawin_errbuf)),
				       rmawin_errbuf);
	if (msg && *msg)
		return msg;
unknown:
	snprintf(rmawin_errbuf, sizeof(rmawin_errbuf), "unknown error %d", err);
	return rmawin_errbuf;
}
