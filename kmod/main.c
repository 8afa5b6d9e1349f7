// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: MPI-style one-sided communication over RDMA.
 *
 * Module init and exit.  Setup order: counters and debugfs, the ib_client
 * (so devices are known), then /dev/rmawin (so nobody can open it before
 * there is something to bind to).  Exit mirrors it.
 */
#include <linux/module.h>

#include "rmawin.h"

struct rmawin_stats rmawin_stats;

/**
 * rmawin_counter_read() - the sum of a counter over every CPU
 * @counters: an endpoint's counters, or the module's
 * @c: which
 *
 * Exact once nothing counts any more; while something does, a value that
 * was true at some moment of the read, give or take what is counted
 * meanwhile.
 */
long rmawin_counter_read(struct rmawin_counters __percpu *counters, enum rmawin_counter c)
{
	long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(counters, cpu)->c[c]);
	return sum;
}

static int __init rmawin_init(void)
{
	int ret;

	rmawin_stats.counters = alloc_percpu(struct rmawin_counters);
	if (!rmawin_stats.counters)
		return -ENOMEM;
	rmawin_debugfs_init();
	ret = rmawin_devices_init();
	if (ret)
		goto err_debugfs_exit;
	ret = rmawin_chardev_init();
	if (ret)
		goto err_devices_exit;
	return 0;

err_devices_exit:
	rmawin_devices_exit();
err_debugfs_exit:
	rmawin_debugfs_exit();
	free_percpu(rmawin_stats.counters);
	return ret;
}

static void __exit rmawin_exit(void)
{
	rmawin_chardev_exit();
	rmawin_devices_exit();
	rmawin_debugfs_exit();
	free_percpu(rmawin_stats.counters);
}

module_init(rmawin_init);
module_exit(rmawin_exit);

MODULE_DESCRIPTION("MPI-style one-sided communication (RMA windows) over RDMA");
MODULE_AUTHOR("The rmawin authors");
MODULE_LICENSE("GPL");
