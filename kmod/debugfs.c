// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: /sys/kernel/debug/rmawin/, read by the rmawin status tool and by
 * the selftests' leak checks.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "rmawin.h"

static struct dentry *rmawin_debugfs_root;

static int rmawin_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "endpoints %d\n", atomic_read(&rmawin_stats.endpoints));
	seq_printf(m, "devices %d\n", atomic_read(&rmawin_stats.devices));
	seq_printf(m, "pds %d\n", atomic_read(&rmawin_stats.pds));
	seq_printf(m, "groups %d\n", atomic_read(&rmawin_stats.groups));
	seq_printf(m, "qps %d\n", atomic_read(&rmawin_stats.qps));
	seq_printf(m, "windows %d\n", atomic_read(&rmawin_stats.windows));
	seq_printf(m, "mrs %d\n", atomic_read(&rmawin_stats.mrs));
	seq_printf(m, "pinned_pages %ld\n", atomic_long_read(&rmawin_stats.pinned_pages));
	seq_printf(m, "reqs %d\n", atomic_read(&rmawin_stats.reqs));
	seq_printf(m, "ops %ld\n", atomic_long_read(&rmawin_stats.ops));
	seq_printf(m, "errors %ld\n", atomic_long_read(&rmawin_stats.errors));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rmawin_stats);

/* debugfs is best effort: the module works without it */
void rmawin_debugfs_init(void)
{
	rmawin_debugfs_root = debugfs_create_dir("rmawin", NULL);
	debugfs_create_file("stats", 0444, rmawin_debugfs_root, NULL,
			    &rmawin_stats_fops);
}

void rmawin_debugfs_exit(void)
{
	debugfs_remove_recursive(rmawin_debugfs_root);
}
