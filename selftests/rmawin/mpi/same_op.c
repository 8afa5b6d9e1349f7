// SPDX-License-Identifier: GPL-2.0
/*
 * MPI's accumulate_ops info key: a window created (and one allocated) with
 * accumulate_ops=same_op_no_op gets the device's atomics.  Every rank adds
 * to one int64 counter on rank 0 with MPI_Fetch_and_op under a shared
 * lock_all, rank 0 included; the counter ends exact, each rank's fetched
 * values rise strictly, and the module's nic_atomics counter grew by at
 * least one per operation (the counters of every guest the job spans added
 * up).  The same on a window without the key, where
 * the counter must not grow (MT_REAL_MPI=1 leaves the counters out).
 */
#include <stdint.h>
#include "mpitest.h"

#define ITERS	100

/* the module-wide counter, or -1 where it cannot be read */
static long nic_atomics(void)
{
	FILE *f = fopen("/sys/kernel/debug/rmawin/stats", "r");
	char key[64];
	long v, found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, "nic_atomics"))
			found = v;
	fclose(f);
	return found;
}

/* ITERS fetch-and-adds from every rank to rank 0's counter; checked there */
static void count_up(MPI_Win win, int64_t *counter)
{
	int64_t one = 1, prev = -1, got;
	int i;

	MPI_OK(MPI_Win_lock_all(0, win));
	for (i = 0; i < ITERS; i++) {
		MPI_OK(MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 0, MPI_SUM, win));
		MPI_OK(MPI_Win_flush(0, win));
		CHECK(got > prev && got < (int64_t)ITERS * mt_size, "fetched %lld after %lld",
		      (long long)got, (long long)prev);
		prev = got;
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (mt_rank == 0)
		CHECK(*counter == (int64_t)ITERS * mt_size, "counter %lld, want %d",
		      (long long)*counter, ITERS * mt_size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* the ranks of this rank's node (guest): the counter is the node's */
static MPI_Comm node_comm;

/*
 * How much nic_atomics grew over one count_up() of every rank, added up
 * over the nodes the job runs on (one rank of each reads its node's
 * counter); -1 if a node could not read it.
 */
static long counted(MPI_Win win, int64_t *counter)
{
	long before, after, grew, sum;
	int node_rank;

	MPI_OK(MPI_Comm_rank(node_comm, &node_rank));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	before = nic_atomics();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	count_up(win, counter);
	after = nic_atomics();
	grew = before < 0 || after < 0 ? -1 : after - before;
	if (node_rank != 0)
		grew = 0;
	MPI_OK(MPI_Allreduce(&grew, &sum, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD));
	if (sum < 0)
		return -1;
	MPI_OK(MPI_Allreduce(&grew, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
	return sum;
}

int main(int argc, char **argv)
{
	static int64_t mem[8] __attribute__((aligned(8)));
	const char *real = getenv("MT_REAL_MPI");
	int counters = !(real && !strcmp(real, "1"));
	int64_t *abase;
	MPI_Info info;
	MPI_Win win;
	long grew;

	mt_init(&argc, &argv);
	MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
				   &node_comm));
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "accumulate_ops", "same_op_no_op"));

	MPI_OK(MPI_Win_create(mem, sizeof(mem), 8, info, MPI_COMM_WORLD, &win));
	mt_backend(win);
	grew = counted(win, mem);
	/* the counter is the guest's: every rank of this job is in it */
	if (counters && mt_rank == 0)
		CHECK(grew >= (long)ITERS * mt_size, "nic_atomics grew by %ld, want >= %d",
		      grew, ITERS * mt_size);
	MPI_OK(MPI_Win_free(&win));

	MPI_OK(MPI_Win_allocate(sizeof(int64_t), 8, info, MPI_COMM_WORLD, &abase, &win));
	mt_backend(win);
	*abase = 0;
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	grew = counted(win, abase);
	if (counters && mt_rank == 0)
		CHECK(grew >= (long)ITERS * mt_size, "allocated: nic_atomics grew by %ld", grew);
	MPI_OK(MPI_Win_free(&win));

	/* without the key: the target's kernel applies them, no device atomics */
	memset(mem, 0, sizeof(mem));
	MPI_OK(MPI_Win_create(mem, sizeof(mem), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	mt_backend(win);
	grew = counted(win, mem);
	if (counters && mt_rank == 0)
		CHECK(grew == 0, "no key: nic_atomics grew by %ld", grew);
	MPI_OK(MPI_Win_free(&win));

	MPI_OK(MPI_Info_free(&info));
	MPI_OK(MPI_Comm_free(&node_comm));
	mt_done("same_op");
	return 0;
}
