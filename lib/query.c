// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * rmawin_query(): the module's ABI version, features and RDMA devices.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmawin_priv.h"

/* The kernel's names are NUL-terminated, but a short copy must stay so too. */
static void rmawin_copy_name(char *dst, size_t dst_len, const char *src, size_t src_len)
{
	size_t n = strnlen(src, src_len);

	if (n >= dst_len)
		n = dst_len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void rmawin_dev_from_kernel(struct rmawin_device *d, const struct rmawin_dev_info *k)
{
	memset(d, 0, sizeof(*d));
	rmawin_copy_name(d->name, sizeof(d->name), k->name, sizeof(k->name));
	rmawin_copy_name(d->netdev, sizeof(d->netdev), k->netdev, sizeof(k->netdev));
	d->node_guid = k->node_guid;
	d->port = k->port > INT_MAX ? INT_MAX : (int)k->port;
	d->state = k->state > INT_MAX ? INT_MAX : (int)k->state;
	d->active_mtu = k->active_mtu;
	d->link_layer = k->link_layer;
	d->max_qp_wr = k->max_qp_wr;
	d->max_sge = k->max_sge;
	d->max_fast_reg_page_list_len = k->max_fast_reg_page_list_len;
	d->atomic_cap = k->atomic_cap;
}

int rmawin_query(struct rmawin_info *info, struct rmawin_device *devs, int max_devs)
{
	struct rmawin_dev_info *kdevs = NULL;
	struct rmawin_query q;
	int fd, ret, i, n;

	if (max_devs < 0 || (max_devs > 0 && !devs))
		return -EINVAL;

	if (max_devs > 0) {
		kdevs = calloc(max_devs, sizeof(*kdevs));
		if (!kdevs)
			return -ENOMEM;
	}

	fd = rmawin__open_dev();
	if (fd < 0) {
		ret = fd;
		goto err_free_kdevs;
	}

	memset(&q, 0, sizeof(q));
	if (kdevs) {
		q.devs_ptr = (uintptr_t)kdevs;
		q.devs_len = max_devs;
		q.dev_entry_size = sizeof(*kdevs);
	}
	ret = rmawin__ioctl_struct(fd, RMAWIN_IOC_QUERY, &q);
	if (ret < 0)
		goto err_close_fd;
	close(fd);

	n = q.ndevs > INT_MAX ? INT_MAX : (int)q.ndevs;
	if (kdevs) {
		for (i = 0; i < n && i < max_devs; i++)
			rmawin_dev_from_kernel(&devs[i], &kdevs[i]);
		free(kdevs);
	}

	if (info) {
		memset(info, 0, sizeof(*info));
		info->abi_version = q.abi_version;
		info->features = q.features;
		info->ndevs = n;
	}
	return n;

err_close_fd:
	close(fd);
err_free_kdevs:
	free(kdevs);
	return ret;
}
