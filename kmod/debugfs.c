// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: /sys/kernel/debug/rmawin/, read by the rmawin status tool and by
 * the selftests' leak checks.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "rmawin.h"

static struct dentry *rmawin_debugfs_root;

static const char *const rmawin_counter_names[] = {
	[RMAWIN_CNT_WINDOWS] = "windows",
	[RMAWIN_CNT_PINNED_PAGES] = "pinned_pages",
	[RMAWIN_CNT_OPS] = "ops",
	[RMAWIN_CNT_ERRORS] = "errors",
	[RMAWIN_CNT_RCACHE_HITS] = "rcache_hits",
	[RMAWIN_CNT_RCACHE_MISSES] = "rcache_misses",
	[RMAWIN_CNT_CTRL_MSGS] = "ctrl_msgs",
	[RMAWIN_CNT_CTRL_MSGS_SOFTIRQ] = "ctrl_msgs_softirq",
	[RMAWIN_CNT_AUTH_FAILURES] = "auth_failures",
	[RMAWIN_CNT_PROTO_ERRORS] = "proto_errors",
	[RMAWIN_CNT_NOTIFY_LOST] = "notify_lost",
	[RMAWIN_CNT_NIC_ATOMICS] = "nic_atomics",
	[RMAWIN_CNT_POLL_NS] = "poll_ns",
	[RMAWIN_CNT_RING_ENTRIES] = "ring_entries",
	[RMAWIN_CNT_SEND_CQES_DIRECT] = "send_cqes_direct",
	[RMAWIN_CNT_SEND_CQES_SOFTIRQ] = "send_cqes_softirq",
	[RMAWIN_CNT_REQ_ALLOCS] = "req_allocs",
	[RMAWIN_CNT_EARLY_COMPLETES] = "early_completes",
	[RMAWIN_CNT_CARRIED_OPS] = "carried_ops",
	[RMAWIN_CNT_KEEPALIVES] = "keepalives",
};

static void rmawin_show_counters(struct seq_file *m, struct rmawin_counters __percpu *c)
{
	int i;

	BUILD_BUG_ON(ARRAY_SIZE(rmawin_counter_names) != RMAWIN_NR_COUNTERS);
	for (i = 0; i < RMAWIN_NR_COUNTERS; i++)
		seq_printf(m, "%s %ld\n", rmawin_counter_names[i], rmawin_counter_read(c, i));
}

static int rmawin_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "endpoints %d\n", atomic_read(&rmawin_stats.endpoints));
	seq_printf(m, "devices %d\n", atomic_read(&rmawin_stats.devices));
	seq_printf(m, "pds %d\n", atomic_read(&rmawin_stats.pds));
	seq_printf(m, "groups %d\n", atomic_read(&rmawin_stats.groups));
	seq_printf(m, "qps %d\n", atomic_read(&rmawin_stats.qps));
	seq_printf(m, "mrs %d\n", atomic_read(&rmawin_stats.mrs));
	seq_printf(m, "reqs %d\n", atomic_read(&rmawin_stats.reqs));
	seq_printf(m, "pollers %d\n", atomic_read(&rmawin_stats.pollers));
	seq_printf(m, "poll_sleeps_idle %ld\n", atomic_long_read(&rmawin_stats.poll_sleeps_idle));
	seq_printf(m, "poll_sleeps_shared %ld\n",
		   atomic_long_read(&rmawin_stats.poll_sleeps_shared));
	rmawin_show_counters(m, rmawin_stats.counters);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rmawin_stats);

static int rmawin_ep_stats_show(struct seq_file *m, void *unused)
{
	struct rmawin_ep *ep = m->private;
	struct rmawin_group *grp;

	seq_printf(m, "pid %d\n", pid_nr(ep->pid));
	/* threads waiting for peers (a barrier, a lock, a POST...), without the lock */
	seq_printf(m, "waiting %u\n", READ_ONCE(ep->sleepers));
	/* the thread rmawin_poll/<n> that consumes its ring, or -1 */
	seq_printf(m, "poller %d\n", rmawin_ring_poller_of(ep));
	/*
	 * The lock keeps the group from going away under us.  No call holds
	 * it while it waits for peers, but one may for a round trip (a flush,
	 * a join), and a reader waits for nobody: then the endpoint is
	 * "busy" and its group fields are left out.
	 */
	if (mutex_trylock(&ep->lock)) {
		grp = ep->group;
		seq_printf(m, "device %s\n", ep->dev ? dev_name(&ep->dev->ibdev->dev) :
			   ep->detached ? "(removed)" : "(none)");
		seq_printf(m, "rank %d\n", grp ? (int)grp->rank : -1);
		seq_printf(m, "nranks %u\n", grp ? grp->nranks : 0);
		seq_printf(m, "peers_connected %d\n", grp ? atomic_read(&grp->nconnected) : 0);
		mutex_unlock(&ep->lock);
	} else {
		seq_puts(m, "busy 1\n");
	}
	/* per CPU, in the endpoint itself */
	rmawin_show_counters(m, ep->counters);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rmawin_ep_stats);

/**
 * rmawin_debugfs_ep_add() - /sys/kernel/debug/rmawin/ep<id>
 * @ep: a new endpoint
 */
void rmawin_debugfs_ep_add(struct rmawin_ep *ep)
{
	char name[24];

	snprintf(name, sizeof(name), "ep%u", ep->id);
	ep->debugfs = debugfs_create_file(name, 0444, rmawin_debugfs_root, ep,
					  &rmawin_ep_stats_fops);
}

/**
 * rmawin_debugfs_ep_remove() - remove the endpoint's file
 * @ep: the endpoint; waits for readers of its file to finish
 */
void rmawin_debugfs_ep_remove(struct rmawin_ep *ep)
{
	debugfs_remove(ep->debugfs);
}

/*
 * Test hook: each receive completion waits this long (ms, capped at
 * RMAWIN_RECV_DELAY_MAX) before its message is dispatched, so that a
 * test can make the CM's events overtake received messages.  Root only,
 * as all of debugfs; 0, the default, is the normal path.
 */
u32 rmawin_recv_delay_ms;

/*
 * Test hook: a group's teardown waits this long (ms, capped at
 * RMAWIN_RECV_DELAY_MAX) after destroying each peer's connection, so that
 * a test can have messages from the peers still connected arrive while
 * the others' queue pairs are gone.  0, the default, is the normal path.
 */
u32 rmawin_teardown_delay_ms;

/*
 * Test hook: non-zero, every poller behaves as if another task always
 * wanted its CPU (poller.c): it naps, then sleeps with RMAWIN_SQ_YIELDED,
 * so that a test can see what the library does then.
 */
u32 rmawin_poll_force_yield;

/* debugfs is best effort: the module works without it */
void rmawin_debugfs_init(void)
{
	rmawin_debugfs_root = debugfs_create_dir("rmawin", NULL);
	debugfs_create_file("stats", 0444, rmawin_debugfs_root, NULL,
			    &rmawin_stats_fops);
	debugfs_create_u32("recv_delay_ms", 0600, rmawin_debugfs_root, &rmawin_recv_delay_ms);
	debugfs_create_u32("teardown_delay_ms", 0600, rmawin_debugfs_root,
			   &rmawin_teardown_delay_ms);
	debugfs_create_u32("poll_force_yield", 0600, rmawin_debugfs_root,
			   &rmawin_poll_force_yield);
}

void rmawin_debugfs_exit(void)
{
	debugfs_remove_recursive(rmawin_debugfs_root);
}
