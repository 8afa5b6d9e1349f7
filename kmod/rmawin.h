/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: private declarations shared by the module's files.
 *
 * Lock order (outer to inner):
 *   rmawin_ep.lock -> rmawin_dev.ep_lock
 *   rmawin_devices_lock -> (nothing of ours)
 * The device-removal path never holds rmawin_dev.ep_lock while it takes an
 * endpoint's lock.
 */
#ifndef RMAWIN_PRIV_H
#define RMAWIN_PRIV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <rdma/ib_verbs.h>
#include <linux/rmawin.h>

/**
 * struct rmawin_dev - an RDMA device rmawin's ib_client was given
 * @ibdev: the device; valid until our remove() callback returns
 * @node: entry in rmawin_devices, under rmawin_devices_lock
 * @ref: the device's lifetime; endpoints bound to it hold a reference
 * @ep_lock: protects @eps and @dead
 * @eps: endpoints bound to this device, via rmawin_ep.dev_node
 * @dead: set by remove(); no endpoint may bind any more
 */
struct rmawin_dev {
	struct ib_device *ibdev;
	struct list_head node;
	struct kref ref;
	struct mutex ep_lock;		/* protects eps and dead */
	struct list_head eps;
	bool dead;
};

/**
 * struct rmawin_ep - an endpoint: the state behind one open /dev/rmawin
 * @ref: the endpoint's lifetime (the file, and device removal in flight)
 * @lock: serializes ioctls against each other and against device removal
 * @id: unique id, for debug output
 * @dev: bound device, or NULL before EP_BIND and after the device left
 * @dev_node: entry in @dev's endpoint list
 * @pd: protection domain on @dev
 * @port: port of @dev the endpoint uses
 * @detached: the bound device was removed; calls needing it get -ENODEV
 */
struct rmawin_ep {
	struct kref ref;
	struct mutex lock;		/* ioctls vs each other and device removal */
	u32 id;
	struct rmawin_dev *dev;
	struct list_head dev_node;
	struct ib_pd *pd;
	u32 port;
	bool detached;
};

/**
 * struct rmawin_stats - module-wide object counters, for leak checks
 * @endpoints: endpoints alive
 * @devices: RDMA devices known
 * @pds: protection domains allocated
 */
struct rmawin_stats {
	atomic_t endpoints;
	atomic_t devices;
	atomic_t pds;
};

extern struct rmawin_stats rmawin_stats;

#define rmawin_ep_dbg(ep, fmt, ...) \
	pr_debug("ep%u: " fmt, (ep)->id, ##__VA_ARGS__)

/* device.c */
int rmawin_devices_init(void);
void rmawin_devices_exit(void);
struct rmawin_dev *rmawin_dev_get_by_name(const char *name);
void rmawin_dev_put(struct rmawin_dev *rdev);
int rmawin_ioctl_query(struct rmawin_ep *ep, void *arg);

/* ep.c */
struct rmawin_ep *rmawin_ep_alloc(void);
void rmawin_ep_release(struct rmawin_ep *ep);
void rmawin_ep_put(struct rmawin_ep *ep);
void rmawin_ep_detach(struct rmawin_ep *ep, struct rmawin_dev *rdev);
int rmawin_ioctl_ep_bind(struct rmawin_ep *ep, void *arg);

/* chardev.c */
int rmawin_chardev_init(void);
void rmawin_chardev_exit(void);

/* debugfs.c */
void rmawin_debugfs_init(void);
void rmawin_debugfs_exit(void);

#endif /* RMAWIN_PRIV_H */
