// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: status tool.
 *
 *   rmawin [status]   the module's ABI and features, the RDMA devices it
 *                     sees, its counters, and every open endpoint's
 *   rmawin devices    the devices only
 *
 * Devices come from RMAWIN_IOC_QUERY through librmawin; counters from
 * /sys/kernel/debug/rmawin/ (debugfs must be mounted, and readable: root).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmawin.h>

#define DEBUGFS_DIR	"/sys/kernel/debug/rmawin"

static const char *const port_states[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};

static int show_devices(void)
{
	struct rmawin_device devs[64];
	struct rmawin_info info;
	int n, i;

	n = rmawin_query(&info, devs, 64);
	if (n < 0) {
		fprintf(stderr, "rmawin: %s\n", rmawin_strerror(n));
		return 1;
	}
	printf("module: ABI %u, features 0x%llx\n", info.abi_version,
	       (unsigned long long)info.features);
	printf("devices: %d\n", n);
	for (i = 0; i < n && i < 64; i++) {
		const struct rmawin_device *d = &devs[i];
		const char *st = d->state >= 0 && d->state < 6 ? port_states[d->state] : "?";

		printf("  %s/%d  %-6s  netdev %-8s mtu %-4u  max_fast_reg_pages %u\n",
		       d->name, d->port, st, d->netdev[0] ? d->netdev : "-",
		       d->active_mtu, d->max_fast_reg_page_list_len);
	}
	return 0;
}

/* Print a debugfs file's "key value" lines, indented. */
static int show_file(const char *path, const char *indent)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		printf("%s%s", indent, line);
	fclose(f);
	return 0;
}

static int show_counters(void)
{
	struct dirent **names;
	char path[512];
	int n, i, ret;

	ret = show_file(DEBUGFS_DIR "/stats", "  ");
	if (ret) {
		printf("counters: unavailable (%s: %s; mount debugfs, run as root)\n",
		       DEBUGFS_DIR "/stats", strerror(-ret));
		return 0;
	}
	n = scandir(DEBUGFS_DIR, &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (!strncmp(names[i]->d_name, "ep", 2)) {
			printf("endpoint %s:\n", names[i]->d_name + 2);
			snprintf(path, sizeof(path), DEBUGFS_DIR "/%s", names[i]->d_name);
			show_file(path, "  ");
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "status";
	int ret;

	if (!strcmp(cmd, "devices"))
		return show_devices();
	if (strcmp(cmd, "status")) {
		fprintf(stderr, "usage: rmawin [status|devices]\n");
		return 2;
	}
	ret = show_devices();
	printf("counters:\n");
	show_counters();
	return ret;
}
