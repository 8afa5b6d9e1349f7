/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's files in debugfs (its stats, its root-only test hooks) and
 * plain number files (parameters, cgroup counters), for the selftests:
 * no test harness here, so that the standalone programs (lost_check.c)
 * use it too.  rmawin_test_sys.h includes it.
 */
#ifndef RMAWIN_SELFTEST_FILES_H
#define RMAWIN_SELFTEST_FILES_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define RMAWIN_STATS_PATH	"/sys/kernel/debug/rmawin/stats"

/* One counter from the module's debugfs stats file, or -1. */
static inline long rmawin_stat(const char *key)
{
	char name[64];
	long val, found = -1;
	FILE *f = fopen(RMAWIN_STATS_PATH, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &val) == 2) {
		if (!strcmp(name, key)) {
			found = val;
			break;
		}
	}
	fclose(f);
	return found;
}

/* The number in file @path (a module parameter, a cgroup's counter), or -1. */
static inline long rmawin_test_read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Write @v to file @path.  Return: 0 or -1. */
static inline int rmawin_test_write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* The module's root-only test hooks, in debugfs: recv_delay_ms, teardown_delay_ms. */
#define RMAWIN_HOOK_DIR		"/sys/kernel/debug/rmawin/"

/* Set hook @name to @ms.  Return: 0 or -errno. */
static inline int rmawin_test_set_hook(const char *name, int ms)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), RMAWIN_HOOK_DIR "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%d\n", ms) < 0 ? -EIO : 0;
	return fclose(f) ? -errno : ret;
}

#endif /* RMAWIN_SELFTEST_FILES_H */
