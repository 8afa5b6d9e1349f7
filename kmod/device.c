// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the ib_client side.  ib_core tells us about every RDMA device
 * through add()/remove(); we keep our own list so that QUERY and EP_BIND
 * never look at a device whose removal has started.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/overflow.h>
#include <linux/netdevice.h>
#include <rdma/ib_cache.h>

#include "rmawin.h"

static LIST_HEAD(rmawin_devices);
/* protects rmawin_devices */
static DEFINE_MUTEX(rmawin_devices_lock);

static struct ib_client rmawin_ib_client;

static void rmawin_dev_free(struct kref *ref)
{
	struct rmawin_dev *rdev = container_of(ref, struct rmawin_dev, ref);

	WARN_ON(!list_empty(&rdev->eps));
	mutex_destroy(&rdev->ep_lock);
	kfree(rdev);
	atomic_dec(&rmawin_stats.devices);
}

void rmawin_dev_put(struct rmawin_dev *rdev)
{
	kref_put(&rdev->ref, rmawin_dev_free);
}

/**
 * rmawin_dev_get_by_name() - find a live device by its current name
 * @name: NUL-terminated device name
 *
 * Context: process context; takes rmawin_devices_lock.
 * Return: the device with a reference held, or NULL.
 */
struct rmawin_dev *rmawin_dev_get_by_name(const char *name)
{
	struct rmawin_dev *rdev, *found = NULL;

	mutex_lock(&rmawin_devices_lock);
	list_for_each_entry(rdev, &rmawin_devices, node) {
		if (!strcmp(dev_name(&rdev->ibdev->dev), name)) {
			kref_get(&rdev->ref);
			found = rdev;
			break;
		}
	}
	mutex_unlock(&rmawin_devices_lock);
	return found;
}

/**
 * rmawin_dev_get_by_ibdev() - our device for an ib_device
 * @ibdev: the ib_device
 *
 * Return: the device with a reference held, or NULL if it is not (or no
 * longer) in our list.
 */
struct rmawin_dev *rmawin_dev_get_by_ibdev(struct ib_device *ibdev)
{
	struct rmawin_dev *rdev, *found = NULL;

	mutex_lock(&rmawin_devices_lock);
	list_for_each_entry(rdev, &rmawin_devices, node) {
		if (rdev->ibdev == ibdev) {
			kref_get(&rdev->ref);
			found = rdev;
			break;
		}
	}
	mutex_unlock(&rmawin_devices_lock);
	return found;
}

static int rmawin_ib_add(struct ib_device *ibdev)
{
	struct rmawin_dev *rdev;

	rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev)
		return -ENOMEM;
	rdev->ibdev = ibdev;
	kref_init(&rdev->ref);
	mutex_init(&rdev->ep_lock);
	INIT_LIST_HEAD(&rdev->eps);
	ib_set_client_data(ibdev, &rmawin_ib_client, rdev);
	atomic_inc(&rmawin_stats.devices);

	mutex_lock(&rmawin_devices_lock);
	list_add_tail(&rdev->node, &rmawin_devices);
	mutex_unlock(&rmawin_devices_lock);
	return 0;
}

/*
 * ib_core waits for remove() to return before it tears the device down, so
 * everything any endpoint allocated on it must be gone by then.
 */
static void rmawin_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct rmawin_dev *rdev = client_data;
	struct rmawin_ep *ep;

	mutex_lock(&rmawin_devices_lock);
	list_del(&rdev->node);
	mutex_unlock(&rmawin_devices_lock);

	mutex_lock(&rdev->ep_lock);
	rdev->dead = true;
	/* wake whatever waits with an endpoint's lock held, so we can take it */
	list_for_each_entry(ep, &rdev->eps, dev_node)
		wake_up_all(&ep->wq);
	while (!list_empty(&rdev->eps)) {
		ep = list_first_entry(&rdev->eps, struct rmawin_ep, dev_node);
		kref_get(&ep->ref);
		/* the endpoint's lock nests outside ours: drop ours first */
		mutex_unlock(&rdev->ep_lock);
		rmawin_ep_detach(ep, rdev);
		rmawin_ep_put(ep);
		mutex_lock(&rdev->ep_lock);
	}
	mutex_unlock(&rdev->ep_lock);
	rmawin_dev_put(rdev);
}

static void
rmawin_fill_port(struct rmawin_dev_info *info, struct ib_device *ibdev, u32 port)
{
	const struct ib_device_attr *attrs = &ibdev->attrs;
	const struct ib_gid_attr *gid_attr;
	struct net_device *ndev;
	struct ib_port_attr pattr;

	memset(info, 0, sizeof(*info));
	strscpy(info->name, dev_name(&ibdev->dev), sizeof(info->name));
	info->node_guid = be64_to_cpu(ibdev->node_guid);
	info->port = port;
	info->max_qp_wr = attrs->max_qp_wr;
	info->max_sge = attrs->max_send_sge;
	info->max_fast_reg_page_list_len = attrs->max_fast_reg_page_list_len;
	info->atomic_cap = attrs->atomic_cap;
	switch (rdma_port_get_link_layer(ibdev, port)) {
	case IB_LINK_LAYER_INFINIBAND:
		info->link_layer = 1;
		break;
	case IB_LINK_LAYER_ETHERNET:
		info->link_layer = 2;
		break;
	default:
		break;
	}

	if (!ib_query_port(ibdev, port, &pattr)) {
		info->state = pattr.state;
		info->active_mtu = ib_mtu_enum_to_int(pattr.active_mtu);
	}

	/* RoCE ports carry their netdev in the GID table */
	gid_attr = rdma_get_gid_attr(ibdev, port, 0);
	if (!IS_ERR(gid_attr)) {
		rcu_read_lock();
		ndev = rdma_read_gid_attr_ndev_rcu(gid_attr);
		if (!IS_ERR(ndev))
			strscpy(info->netdev, ndev->name, sizeof(info->netdev));
		rcu_read_unlock();
		rdma_put_gid_attr(gid_attr);
	}
}

/*
 * Snapshot up to @max port entries into @out; returns how many ports exist.
 * Copying to userspace happens later, outside rmawin_devices_lock.
 */
static u32 rmawin_devices_snapshot(struct rmawin_dev_info *out, u32 max)
{
	struct rmawin_dev *rdev;
	u32 n = 0, port;

	mutex_lock(&rmawin_devices_lock);
	list_for_each_entry(rdev, &rmawin_devices, node) {
		rdma_for_each_port(rdev->ibdev, port) {
			if (n < max)
				rmawin_fill_port(&out[n], rdev->ibdev, port);
			n++;
		}
	}
	mutex_unlock(&rmawin_devices_lock);
	return n;
}

/* Entry sizes beyond this are not a struct anyone will ever ship. */
#define RMAWIN_DEV_ENTRY_MAX	4096
/* Nor are more ports than this on one machine. */
#define RMAWIN_QUERY_DEVS_MAX	1024

static int rmawin_copy_dev_infos(const struct rmawin_query *q,
				 const struct rmawin_dev_info *infos, u32 n)
{
	u8 __user *dst = u64_to_user_ptr(q->devs_ptr);
	size_t known = min_t(size_t, q->dev_entry_size, sizeof(*infos));
	u32 i;

	for (i = 0; i < n; i++, dst += q->dev_entry_size) {
		if (copy_to_user(dst, &infos[i], known))
			return -EFAULT;
		if (q->dev_entry_size > known &&
		    clear_user(dst + known, q->dev_entry_size - known))
			return -EFAULT;
	}
	return 0;
}

/**
 * rmawin_ioctl_query() - RMAWIN_IOC_QUERY
 * @ep: the endpoint (unused: QUERY needs no bound device)
 * @arg: struct rmawin_query, already copied in
 *
 * Context: process context.
 * Return: 0, or -EINVAL for bad flags or entry size, -EFAULT for a bad
 * devs_ptr, -ENOMEM.
 */
int rmawin_ioctl_query(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_query *q = arg;
	struct rmawin_dev_info *infos = NULL;
	u32 want = 0, n;
	size_t bytes;
	int ret;

	if (q->flags)
		return -EINVAL;
	if (q->devs_len) {
		if (q->dev_entry_size <
		    offsetofend(struct rmawin_dev_info, atomic_cap) ||
		    q->dev_entry_size > RMAWIN_DEV_ENTRY_MAX)
			return -EINVAL;
		if (check_mul_overflow((size_t)q->devs_len,
				       (size_t)q->dev_entry_size, &bytes) ||
		    !access_ok(u64_to_user_ptr(q->devs_ptr), bytes))
			return -EFAULT;
		want = min_t(u32, q->devs_len, RMAWIN_QUERY_DEVS_MAX);
		infos = kcalloc(want, sizeof(*infos), GFP_KERNEL);
		if (!infos)
			return -ENOMEM;
	}

	n = rmawin_devices_snapshot(infos, want);
	q->abi_version = RMAWIN_ABI_VERSION;
	q->features = RMAWIN_FEAT_EP_BIND | RMAWIN_FEAT_GROUP |
		      RMAWIN_FEAT_WINDOWS | RMAWIN_FEAT_ACCUMULATE |
		      RMAWIN_FEAT_PASSIVE | RMAWIN_FEAT_PSCW |
		      RMAWIN_FEAT_NOTIFY | RMAWIN_FEAT_RING | RMAWIN_FEAT_AUTH |
		      RMAWIN_FEAT_WIN_INFO | RMAWIN_FEAT_NIC_ATOMICS |
		      RMAWIN_FEAT_THREADS | RMAWIN_FEAT_RMA_QUIET |
		      RMAWIN_FEAT_NIC_INT_ATOMICS | RMAWIN_FEAT_EPOCH_OP |
		      RMAWIN_FEAT_NIC_SMALL_FLAG | RMAWIN_FEAT_LAZY_LOCK_ALL |
		      RMAWIN_FEAT_RING_QUIET | RMAWIN_FEAT_COMPLETE_OP;
	q->ndevs = n;
	ret = rmawin_copy_dev_infos(q, infos, min(n, want));
	kfree(infos);
	return ret;
}

static struct ib_client rmawin_ib_client = {
	.name = "rmawin",
	.add = rmawin_ib_add,
	.remove = rmawin_ib_remove,
};

int rmawin_devices_init(void)
{
	return ib_register_client(&rmawin_ib_client);
}

void rmawin_devices_exit(void)
{
	ib_unregister_client(&rmawin_ib_client);
}
