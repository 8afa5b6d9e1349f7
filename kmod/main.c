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

static int __init rmawin_init(void)
{
	int ret;

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
	return ret;
}

static void __exit rmawin_exit(void)
{
	rmawin_chardev_exit();
	rmawin_devices_exit();
	rmawin_debugfs_exit();
}

module_init(rmawin_init);
module_exit(rmawin_exit);

MODULE_DESCRIPTION("MPI-style one-sided communication (RMA windows) over RDMA");
MODULE_AUTHOR("The rmawin authors");
MODULE_LICENSE("GPL");
