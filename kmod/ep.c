// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: endpoints.  One endpoint per open file of /dev/rmawin; it binds
 * to one RDMA device and owns everything it allocates there, so that both
 * close() and the device's removal can release it all.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/sched/mm.h>

#include "rmawin.h"

static unsigned int max_endpoints = 64;
module_param(max_endpoints, uint, 0644);
MODULE_PARM_DESC(max_endpoints, "Endpoints (open /dev/rmawin files) one process may have");

static unsigned int wait_spin_us = RMAWIN_WAIT_SPIN_US;
module_param(wait_spin_us, uint, 0644);
MODULE_PARM_DESC(wait_spin_us,
		 "Microseconds a wait for peers polls before it sleeps (at most 100000)");

/**
 * rmawin_wait_spin_ns() - how long a wait for peers polls before it sleeps
 *
 * Return: the module parameter wait_spin_us, capped, in nanoseconds.
 */
u64 rmawin_wait_spin_ns(void)
{
	return (u64)min_t(unsigned int, READ_ONCE(wait_spin_us), RMAWIN_WAIT_SPIN_MAX_US) *
	       NSEC_PER_USEC;
}

static unsigned int keepalive_ms = RMAWIN_KEEPALIVE_MS;
module_param(keepalive_ms, uint, 0644);
MODULE_PARM_DESC(keepalive_ms,
		 "Milliseconds a wait for peers lasts before it probes them (0: never; at most 600000)");

/**
 * rmawin_keepalive_jiffies() - how long a wait for peers goes between probes
 *
 * Return: the module parameter keepalive_ms, capped, in jiffies; or
 * MAX_SCHEDULE_TIMEOUT for 0 (no probes).
 */
long rmawin_keepalive_jiffies(void)
{
	unsigned int ms = READ_ONCE(keepalive_ms);

	if (!ms)
		return MAX_SCHEDULE_TIMEOUT;
	return msecs_to_jiffies(min_t(unsigned int, ms, RMAWIN_KEEPALIVE_MAX_MS));
}

static atomic_t rmawin_ep_ids = ATOMIC_INIT(0);

/* The lock class of every endpoint's window table (rmawin_ep_alloc()). */
static struct lock_class_key rmawin_wins_lock_key;

/* Endpoints per process (mm), as xa_mk_value() counts. */
static DEFINE_XARRAY(rmawin_ep_owners);
static DEFINE_MUTEX(rmawin_ep_owners_lock);

/* One more endpoint for @mm, unless it has max_endpoints already. */
static int rmawin_owner_get(struct mm_struct *mm)
{
	unsigned long n;
	int ret;

	mutex_lock(&rmawin_ep_owners_lock);
	n = xa_to_value(xa_load(&rmawin_ep_owners, (unsigned long)mm) ?: xa_mk_value(0));
	if (n >= READ_ONCE(max_endpoints))
		ret = -EMFILE;
	else
		ret = xa_err(xa_store(&rmawin_ep_owners, (unsigned long)mm, xa_mk_value(n + 1),
				      GFP_KERNEL_ACCOUNT));
	mutex_unlock(&rmawin_ep_owners_lock);
	return ret;
}

static void rmawin_owner_put(struct mm_struct *mm)
{
	unsigned long n;

	mutex_lock(&rmawin_ep_owners_lock);
	n = xa_to_value(xa_load(&rmawin_ep_owners, (unsigned long)mm));
	if (n > 1)
		xa_store(&rmawin_ep_owners, (unsigned long)mm, xa_mk_value(n - 1), GFP_KERNEL);
	else
		xa_erase(&rmawin_ep_owners, (unsigned long)mm);
	mutex_unlock(&rmawin_ep_owners_lock);
}

/**
 * rmawin_ep_alloc() - a new endpoint, owned by the calling process
 *
 * Return: the endpoint, or an ERR_PTR: -EMFILE past max_endpoints for the
 * process, -ENOMEM.
 */
struct rmawin_ep *rmawin_ep_alloc(void)
{
	struct rmawin_ep *ep;
	int ret;

	ret = rmawin_owner_get(current->mm);
	if (ret)
		return ERR_PTR(ret);
	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (ep)
		ep->counters = alloc_percpu_gfp(struct rmawin_counters, GFP_KERNEL_ACCOUNT);
	if (!ep || !ep->counters) {
		kfree(ep);
		rmawin_owner_put(current->mm);
		return ERR_PTR(-ENOMEM);
	}
	/* the process whose memory the endpoint reaches: nobody else may use it */
	ep->owner = current->mm;
	mmgrab(ep->owner);
	kref_init(&ep->ref);
	mutex_init(&ep->lock);
	mutex_init(&ep->coll);
	INIT_LIST_HEAD(&ep->req_free);
	INIT_LIST_HEAD(&ep->dev_node);
	init_waitqueue_head(&ep->wq);
	/*
	 * The receive CQ's softirq handlers look windows up (recv.c).  Its
	 * own lock class: every xa_init() of one file shares one, and
	 * @kmems is taken with bottom halves on.
	 */
	xa_init_flags(&ep->wins, XA_FLAGS_LOCK_BH);
	lockdep_set_class(&ep->wins.xa_lock, &rmawin_wins_lock_key);
	xa_init(&ep->kmems);
	spin_lock_init(&ep->notify_lock);
	INIT_LIST_HEAD(&ep->notify_q);
	ep->id = atomic_inc_return(&rmawin_ep_ids);
	ep->pid = get_pid(task_tgid(current));
	/* what peers make us allocate is charged to the opener's cgroup */
	ep->memcg = get_mem_cgroup_from_mm(current->mm);
	atomic_inc(&rmawin_stats.endpoints);
	rmawin_debugfs_ep_add(ep);
	return ep;
}

static void rmawin_ep_free(struct kref *ref)
{
	struct rmawin_ep *ep = container_of(ref, struct rmawin_ep, ref);

	rmawin_ring_destroy(ep);
	rmawin_reqs_free_cache(ep);
	mutex_destroy(&ep->lock);
	mutex_destroy(&ep->coll);
	xa_destroy(&ep->wins);
	xa_destroy(&ep->kmems);
	rmawin_notify_free(ep);
	mem_cgroup_put(ep->memcg);
	rmawin_owner_put(ep->owner);
	mmdrop(ep->owner);
	put_pid(ep->pid);
	free_percpu(ep->counters);
	kfree(ep);
	atomic_dec(&rmawin_stats.endpoints);
}

void rmawin_ep_put(struct rmawin_ep *ep)
{
	kref_put(&ep->ref, rmawin_ep_free);
}

/**
 * rmawin_ep_sleep() - a thread is about to wait for peers without the lock
 * @ep: the endpoint, locked; unlocked on return
 * @win: the window the wait is on, or NULL
 *
 * Use rmawin_wait_unlocked(), which pairs it with rmawin_ep_wake().
 */
void rmawin_ep_sleep(struct rmawin_ep *ep, struct rmawin_win *win)
{
	lockdep_assert_held(&ep->lock);
	/* debugfs reads it without the lock */
	WRITE_ONCE(ep->sleepers, ep->sleepers + 1);
	if (win)
		win->waiters++;
	mutex_unlock(&ep->lock);
}

/**
 * rmawin_ep_wake() - the wait of rmawin_ep_sleep() is over
 * @ep: the endpoint, unlocked; locked on return
 * @win: as given to rmawin_ep_sleep()
 */
void rmawin_ep_wake(struct rmawin_ep *ep, struct rmawin_win *win)
{
	mutex_lock(&ep->lock);
	if (win)
		win->waiters--;
	WRITE_ONCE(ep->sleepers, ep->sleepers - 1);
	/* rmawin_ep_group_drop() may wait for the last one */
	if (!ep->sleepers)
		wake_up_all(&ep->wq);
}

/**
 * rmawin_ep_group_drop() - tear the endpoint's group down
 * @ep: the endpoint, locked
 *
 * Threads waiting for peers without the lock use the group: their waits
 * are ended first (each then returns its error), and the group goes when
 * the last has taken the lock back and left.  Each ends promptly, so the
 * wait here is bounded; it cannot be a killable one, since a group half
 * torn down is no state to return in.
 */
void rmawin_ep_group_drop(struct rmawin_ep *ep)
{
	lockdep_assert_held(&ep->lock);
	WRITE_ONCE(ep->unwait, true);
	while (ep->sleepers) {
		wake_up_all(&ep->wq);
		mutex_unlock(&ep->lock);
		wait_event(ep->wq, !READ_ONCE(ep->sleepers));
		mutex_lock(&ep->lock);
	}
	/* a sleeper's own call (a WIN_FREE whose barrier failed) may have done it */
	if (ep->group) {
		rmawin_group_destroy(ep->group);
		ep->group = NULL;
	}
	WRITE_ONCE(ep->unwait, false);
}

/**
 * rmawin_coll_lock() - enter a collective call
 * @ep: the endpoint
 *
 * Collective calls (BARRIER, FENCE, WIN_CREATE, WIN_FREE) take the
 * endpoint's collective mutex, then its lock: one at a time per process,
 * so the ranks' calls match up in the order each rank's threads made them.
 * Each is collective over the endpoint's group, which must be there.
 *
 * Return: 0 with both held; else neither, and -EINTR on a fatal signal or
 * what rmawin_ep_check_group() says.
 */
int rmawin_coll_lock(struct rmawin_ep *ep)
{
	int ret;

	if (mutex_lock_killable(&ep->coll))
		return -EINTR;
	if (mutex_lock_killable(&ep->lock)) {
		mutex_unlock(&ep->coll);
		return -EINTR;
	}
	ret = rmawin_ep_check_group(ep);
	if (ret)
		rmawin_coll_unlock(ep);
	return ret;
}

void rmawin_coll_unlock(struct rmawin_ep *ep)
{
	mutex_unlock(&ep->lock);
	mutex_unlock(&ep->coll);
}

/* Release everything the endpoint holds on its device; teardown mirrors bind. */
void rmawin_ep_unbind_locked(struct rmawin_ep *ep)
{
	struct rmawin_dev *rdev = ep->dev;

	lockdep_assert_held(&ep->lock);
	if (ep->group)
		rmawin_ep_group_drop(ep);
	if (!rdev)
		return;

	ib_dealloc_pd(ep->pd);
	ep->pd = NULL;
	atomic_dec(&rmawin_stats.pds);

	mutex_lock(&rdev->ep_lock);
	list_del_init(&ep->dev_node);
	mutex_unlock(&rdev->ep_lock);
	ep->dev = NULL;
	rmawin_dev_put(rdev);
}

/**
 * rmawin_ep_detach() - the endpoint's device is going away
 * @ep: endpoint, referenced by the caller
 * @rdev: the device being removed
 *
 * Context: process context, from the ib_client remove() callback.
 */
void rmawin_ep_detach(struct rmawin_ep *ep, struct rmawin_dev *rdev)
{
	/* the poller takes the lock: stop it first */
	if (READ_ONCE(ep->dev) == rdev)
		rmawin_ring_stop(ep);
	mutex_lock(&ep->lock);
	if (ep->dev == rdev) {
		rmawin_ep_dbg(ep, "device %s removed\n", dev_name(&rdev->ibdev->dev));
		rmawin_ep_unbind_locked(ep);
		ep->detached = true;
	}
	mutex_unlock(&ep->lock);
}

/**
 * rmawin_ep_release() - the endpoint's file is closed
 * @ep: endpoint; the file's reference is dropped
 *
 * Context: process context.
 */
void rmawin_ep_release(struct rmawin_ep *ep)
{
	/* first, so that no reader of the file takes the lock below */
	rmawin_debugfs_ep_remove(ep);
	/* every wait ends: the poller's too, which no signal reaches */
	WRITE_ONCE(ep->closing, true);
	wake_up_all(&ep->wq);
	/* the poller takes the lock: stop it first */
	rmawin_ring_stop(ep);
	mutex_lock(&ep->lock);
	rmawin_ep_unbind_locked(ep);
	mutex_unlock(&ep->lock);
	rmawin_ep_put(ep);
}

/**
 * rmawin_ep_check_group() - may the endpoint use its group?
 * @ep: the endpoint, locked
 *
 * Return: 0, -ENODEV if its device was removed, -ENOTCONN if it has not
 * joined a group.
 */
int rmawin_ep_check_group(struct rmawin_ep *ep)
{
	lockdep_assert_held(&ep->lock);
	if (ep->detached)
		return -ENODEV;
	if (!ep->group)
		return -ENOTCONN;
	return 0;
}

/* Port 0 means the first active port; a port given must exist and be up. */
static int rmawin_pick_port(struct ib_device *ibdev, u32 want, u32 *port)
{
	struct ib_port_attr attr;
	u32 p;

	if (want) {
		if (!rdma_is_port_valid(ibdev, want))
			return -EINVAL;
		if (ib_query_port(ibdev, want, &attr) ||
		    attr.state != IB_PORT_ACTIVE)
			return -ENETDOWN;
		*port = want;
		return 0;
	}
	rdma_for_each_port(ibdev, p) {
		if (!ib_query_port(ibdev, p, &attr) &&
		    attr.state == IB_PORT_ACTIVE) {
			*port = p;
			return 0;
		}
	}
	return -ENETDOWN;
}

/**
 * rmawin_ep_bind_locked() - bind the endpoint to a device
 * @ep: the endpoint, locked and not bound
 * @rdev: the device; the endpoint keeps the caller's reference on success
 * @want_port: port number, or 0 for the first active one
 *
 * Return: 0, -EINVAL or -ENETDOWN for the port, -ENODEV if the device is
 * going away, or the error of ib_alloc_pd().
 */
int rmawin_ep_bind_locked(struct rmawin_ep *ep, struct rmawin_dev *rdev,
			  u32 want_port)
{
	struct ib_pd *pd;
	u32 port;
	int ret;

	lockdep_assert_held(&ep->lock);
	ret = rmawin_pick_port(rdev->ibdev, want_port, &port);
	if (ret)
		return ret;

	pd = ib_alloc_pd(rdev->ibdev, 0);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	atomic_inc(&rmawin_stats.pds);

	mutex_lock(&rdev->ep_lock);
	if (rdev->dead) {
		mutex_unlock(&rdev->ep_lock);
		ret = -ENODEV;
		goto err_dealloc_pd;
	}
	list_add_tail(&ep->dev_node, &rdev->eps);
	mutex_unlock(&rdev->ep_lock);

	ep->dev = rdev;
	ep->pd = pd;
	ep->port = port;
	rmawin_ep_dbg(ep, "bound to %s port %u\n", dev_name(&rdev->ibdev->dev), port);
	return 0;

err_dealloc_pd:
	ib_dealloc_pd(pd);
	atomic_dec(&rmawin_stats.pds);
	return ret;
}

/**
 * rmawin_ioctl_ep_bind() - RMAWIN_IOC_EP_BIND
 * @ep: the endpoint
 * @arg: struct rmawin_ep_bind, already copied in
 *
 * Context: process context.
 * Return: 0; -EINVAL for flags, reserved, an unterminated name or a port the
 * device lacks; -ENODEV for an unknown device or one removed from under the
 * endpoint; -EBUSY if already bound; -ENETDOWN if no usable port is up.
 */
int rmawin_ioctl_ep_bind(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_ep_bind *b = arg;
	struct rmawin_dev *rdev;
	int ret;

	if (b->flags || b->reserved)
		return -EINVAL;
	if (!memchr(b->ibdev, '\0', sizeof(b->ibdev)))
		return -EINVAL;

	if (mutex_lock_killable(&ep->lock))
		return -EINTR;
	if (ep->detached) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (ep->dev) {
		ret = -EBUSY;
		goto out_unlock;
	}
	rdev = rmawin_dev_get_by_name(b->ibdev);
	if (!rdev) {
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = rmawin_ep_bind_locked(ep, rdev, b->port);
	if (ret)
		rmawin_dev_put(rdev);
out_unlock:
	mutex_unlock(&ep->lock);
	return ret;
}
