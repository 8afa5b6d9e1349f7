// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The library's only door into the kernel: opening the device node and
 * issuing ioctls, with errors turned into -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "rmawin_priv.h"

/**
 * rmawin__open_dev() - open the rmawin device node
 *
 * The path is $RMAWIN_DEV, else /dev/rmawin.  secure_getenv() so that a
 * set-user-ID program cannot be pointed at another device node.
 *
 * Return: the descriptor, or -errno (-ENOENT: the module is not loaded).
 */
int rmawin__open_dev(void)
{
	const char *path = secure_getenv("RMAWIN_DEV");
	int fd;

	if (!path || !*path)
		path = RMAWIN_DEFAULT_DEV;
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/**
 * rmawin__ioctl() - fill in an ioctl struct's size and issue the ioctl
 * @fd: an open /dev/rmawin
 * @request: RMAWIN_IOC_*
 * @arg: the ioctl's struct, which starts with its __u32 size
 * @size: sizeof() the struct; use rmawin__ioctl_struct() to get it right
 *
 * Return: the ioctl's non-negative result, or -errno.
 */
int rmawin__ioctl(int fd, unsigned long request, void *arg, uint32_t size)
{
	int ret;

	memcpy(arg, &size, sizeof(size));
	ret = ioctl(fd, request, arg);
	return ret < 0 ? -errno : ret;
}
