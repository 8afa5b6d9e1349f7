// SPDX-License-Identifier: GPL-2.0
/*
 * MPI's accumulate_ops info key, whose default is same_op_no_op (MPI-3.1
 * 11.2.1): a window created (and one allocated) with
 * accumulate_ops=same_op_no_op, one with same_op and one with no info at
 * all get the device's atomics.  Every rank adds to one int64 counter on
 * rank 0 with MPI_Fetch_and_op under a shared lock_all, rank 0 included;
 * the counter ends exact, each rank's fetched values rise strictly, and
 * the module's nic_atomics counter grew by at least one per operation
 * (the counters of every guest the job spans added up).  The same where
 * the counter must not grow: a value the key does not define (where the
 * real MPI takes it: Open MPI refuses the window), one rank's base not
 * 8-byte aligned (the ranks agree on none), and
 * RMAWIN_MPI_SAME_OP=0 (with the key or without).  On a window with the
 * atomics an 8-byte integer accumulate at a target byte offset that is not
 * a multiple of 8 is MPI_ERR_ARG (fetch_and_op, accumulate, and MINLOC on
 * MPI_2INT, a compare-and-swap loop on 8 bytes); with
 * RMAWIN_MPI_SAME_OP=0 the same calls work.  Smaller integers (an
 * MPI_INT8_T array, an MPI_INT32_T counter, an MPI_INT16_T at an odd byte
 * inside one of the device's words, and one across two) on a 64-byte
 * window without info go to the target's kernel: exact, and no device
 * atomic; with RMAWIN_MPI_NIC_SMALL_INTS=1 all but the last take the
 * device's atomics (the counter grows) and the last is MPI_ERR_ARG.  On a
 * window of one word on every rank (created, 8 bytes; allocated, 5 bytes)
 * they take the device's atomics without being asked, exact, and with
 * RMAWIN_MPI_NIC_SMALL_INTS=0 the target's kernel.  MT_REAL_MPI=1 leaves
 * the counters and the refusals out: the real MPI takes those calls.
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
 * How much nic_atomics grew over one @fn(@win, @counter) of every rank,
 * added up over the nodes the job runs on (one rank of each reads its
 * node's counter); -1 if a node could not read it.
 */
static long counted_by(void (*fn)(MPI_Win, int64_t *), MPI_Win win, int64_t *counter)
{
	long before, after, grew, sum;
	int node_rank;

	MPI_OK(MPI_Comm_rank(node_comm, &node_rank));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	before = nic_atomics();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	fn(win, counter);
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

static long counted(MPI_Win win, int64_t *counter)
{
	return counted_by(count_up, win, counter);
}

/* @grew (counted()) on rank 0: at least one device atomic per operation, or none */
static void expect_atomics(int counters, long grew, int want, const char *what)
{
	if (!counters || mt_rank != 0)
		return;
	if (want)
		CHECK(grew >= (long)ITERS * mt_size, "%s: nic_atomics grew by %ld, want >= %d",
		      what, grew, ITERS * mt_size);
	else
		CHECK(grew == 0, "%s: nic_atomics grew by %ld, want 0", what, grew);
}

/* counted() on a window made by MPI_Win_create over @base with @info */
static void created(int counters, void *base, int64_t *counter, MPI_Info info, int want,
		    const char *what)
{
	MPI_Win win;

	memset(counter, 0, sizeof(*counter));
	MPI_OK(MPI_Win_create(base, 64, 8, info, MPI_COMM_WORLD, &win));
	mt_backend(win);
	expect_atomics(counters, counted(win, counter), want, what);
	MPI_OK(MPI_Win_free(&win));
}

/*
 * 8-byte integers at target byte offsets 4 and 12 of rank 0's window (unit
 * 1) from every rank: fetch_and_op SUM and accumulate SUM of 1, and MINLOC
 * on an MPI_2INT at 20.  Each call's error class must be @want; when the
 * calls work, rank 0's window holds the sums and the least rank.
 */
static void misaligned(int64_t *mem, int want)
{
	int64_t one = 1, got, at4, at12;
	int pair[2] = { 10 - mt_rank, mt_rank }, *p;
	unsigned char *bytes = (unsigned char *)mem;
	MPI_Win win;

	memset(mem, 0, 64);
	p = (int *)(bytes + 20);
	p[0] = 100, p[1] = -1;
	MPI_OK(MPI_Win_create(mem, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	mt_backend(win);
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	CHECK(mt_class(MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 4, MPI_SUM, win)) == want,
	      "fetch_and_op at byte 4: not class %d", want);
	CHECK(mt_class(MPI_Accumulate(&one, 1, MPI_LONG, 0, 12, 1, MPI_LONG, MPI_SUM, win)) ==
	      want, "accumulate at byte 12: not class %d", want);
	CHECK(mt_class(MPI_Accumulate(pair, 1, MPI_2INT, 0, 20, 1, MPI_2INT, MPI_MINLOC, win)) ==
	      want, "MINLOC at byte 20: not class %d", want);
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (mt_rank == 0 && want == MPI_SUCCESS) {
		memcpy(&at4, bytes + 4, 8);
		memcpy(&at12, bytes + 12, 8);
		CHECK(at4 == mt_size && at12 == mt_size, "sums %lld %lld, want %d",
		      (long long)at4, (long long)at12, mt_size);
		CHECK(p[0] == 10 - (mt_size - 1) && p[1] == mt_size - 1, "minloc (%d, %d)", p[0],
		      p[1]);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_free(&win));
}

#define SMALL_ITERS	10
#define SMALL_BYTES	48	/* an int8 array at bytes 0-47 of rank 0's window */
#define SMALL_I32	48	/* an int32 counter at byte 48 */
#define SMALL_I16W	53	/* an int16 at an odd byte, inside word 6 */
#define SMALL_I16	55	/* an int16 across words 6 and 7: the target's kernel only */

/* SMALL_ITERS rounds from every rank: the int8 array +1, the int32 counter +1 */
static void small_up(MPI_Win win, int64_t *mem)
{
	int8_t ones[SMALL_BYTES];
	int32_t one = 1, got, prev = -1;
	int16_t one16 = 1;
	int i;

	(void)mem;
	memset(ones, 1, sizeof(ones));
	MPI_OK(MPI_Win_lock_all(0, win));
	for (i = 0; i < SMALL_ITERS; i++) {
		MPI_OK(MPI_Accumulate(ones, SMALL_BYTES, MPI_INT8_T, 0, 0, SMALL_BYTES, MPI_INT8_T,
				      MPI_SUM, win));
		MPI_OK(MPI_Accumulate(&one16, 1, MPI_INT16_T, 0, SMALL_I16W, 1, MPI_INT16_T,
				      MPI_SUM, win));
		MPI_OK(MPI_Fetch_and_op(&one, &got, MPI_INT32_T, 0, SMALL_I32, MPI_SUM, win));
		MPI_OK(MPI_Win_flush(0, win));
		CHECK(got > prev && got < SMALL_ITERS * mt_size, "int32 fetched %d after %d", got,
		      prev);
		prev = got;
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/*
 * Integers of 1, 2 and 4 bytes on a window without info: with @device
 * (RMAWIN_MPI_NIC_SMALL_INTS=1) through the device's atomics, the int16
 * at an odd byte refused; else the target's kernel, no device atomic, the
 * int16 fine.  The values end exact either way.
 */
static void small_ints(int counters, int64_t *mem, int device)
{
	unsigned char *bytes = (unsigned char *)mem;
	int16_t one16 = 1, v16;
	int32_t v32;
	MPI_Win win;
	long grew;
	int i, rc;

	memset(mem, 0, 64);
	MPI_OK(MPI_Win_create(mem, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	mt_backend(win);
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	grew = counted_by(small_up, win, mem);
	if (counters && mt_rank == 0) {
		if (device)
			CHECK(grew >= 3L * SMALL_ITERS * mt_size,
			      "RMAWIN_MPI_NIC_SMALL_INTS=1: nic_atomics grew by %ld, want >= %d",
			      grew, 3 * SMALL_ITERS * mt_size);
		else
			CHECK(grew == 0, "small integers: nic_atomics grew by %ld, want 0", grew);
	}
	MPI_OK(MPI_Win_lock_all(0, win));
	rc = mt_class(MPI_Accumulate(&one16, 1, MPI_INT16_T, 0, SMALL_I16, 1, MPI_INT16_T,
				     MPI_SUM, win));
	CHECK(rc == (counters && device ? MPI_ERR_ARG : MPI_SUCCESS),
	      "int16 at byte %d: class %d", SMALL_I16, rc);
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (mt_rank == 0) {
		for (i = 0; i < SMALL_BYTES; i++)
			CHECK(bytes[i] == SMALL_ITERS * mt_size, "int8 element %d: %u, want %d", i,
			      bytes[i], SMALL_ITERS * mt_size);
		memcpy(&v32, bytes + SMALL_I32, 4);
		memcpy(&v16, bytes + SMALL_I16W, 2);
		CHECK(v32 == SMALL_ITERS * mt_size, "int32 counter %d, want %d", v32,
		      SMALL_ITERS * mt_size);
		CHECK(v16 == SMALL_ITERS * mt_size, "int16 at byte %d: %d, want %d", SMALL_I16W,
		      v16, SMALL_ITERS * mt_size);
		memcpy(&v16, bytes + SMALL_I16, 2);
		CHECK(v16 == (counters && device ? 0 : mt_size), "int16 at byte %d: %d", SMALL_I16,
		      v16);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_free(&win));
}

#define WORD_BYTES	2	/* an int8 array at bytes 0-1 of rank 0's one word */
#define WORD_I16	3	/* an int16 counter at bytes 3-4, odd */
#define WORD_ALLOC	5	/* the allocated window's bytes: up to the counter's end */

/* SMALL_ITERS rounds from every rank: the int8 array +1, the int16 counter +1 */
static void word_up(MPI_Win win, int64_t *mem)
{
	int8_t ones[WORD_BYTES];
	int16_t one = 1, got, prev = -1;
	int i;

	(void)mem;
	memset(ones, 1, sizeof(ones));
	MPI_OK(MPI_Win_lock_all(0, win));
	for (i = 0; i < SMALL_ITERS; i++) {
		MPI_OK(MPI_Accumulate(ones, WORD_BYTES, MPI_INT8_T, 0, 0, WORD_BYTES, MPI_INT8_T,
				      MPI_SUM, win));
		MPI_OK(MPI_Fetch_and_op(&one, &got, MPI_INT16_T, 0, WORD_I16, MPI_SUM, win));
		MPI_OK(MPI_Win_flush(0, win));
		CHECK(got > prev && got < SMALL_ITERS * mt_size, "int16 fetched %d after %d", got,
		      prev);
		prev = got;
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* @win's one word after every rank's word_up(): exact, byte 2 untouched */
static void word_check(const unsigned char *bytes, const char *what)
{
	int16_t v16;
	int i;

	for (i = 0; i < WORD_BYTES; i++)
		CHECK(bytes[i] == SMALL_ITERS * mt_size, "%s: int8 element %d: %u, want %d", what,
		      i, bytes[i], SMALL_ITERS * mt_size);
	memcpy(&v16, bytes + WORD_I16, 2);
	CHECK(v16 == SMALL_ITERS * mt_size, "%s: int16 at byte %d: %d, want %d", what, WORD_I16,
	      v16, SMALL_ITERS * mt_size);
	CHECK(!bytes[2], "%s: byte 2: %u, want 0", what, bytes[2]);
}

/*
 * Windows of one word on every rank, without info: a created one of 8
 * bytes and an allocated one of WORD_ALLOC (rounded up to 8).  The smaller
 * integers take the device's atomics unasked (@device), or with
 * RMAWIN_MPI_NIC_SMALL_INTS=0 the target's kernel; exact either way.
 */
static void one_word(int counters, int64_t *mem, int device)
{
	const char *what = device ? "one-word window" : "one-word window, NIC_SMALL_INTS=0";
	int64_t *abase;
	MPI_Win win;
	long grew;
	int k;

	for (k = 0; k < 2; k++) {
		if (k == 0) {
			*mem = 0;
			MPI_OK(MPI_Win_create(mem, 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
		} else {
			MPI_OK(MPI_Win_allocate(WORD_ALLOC, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &abase,
						&win));
			memset(abase, 0, WORD_ALLOC);
			MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		}
		mt_backend(win);
		grew = counted_by(word_up, win, mem);
		if (counters && mt_rank == 0) {
			if (device)
				CHECK(grew >= 2L * SMALL_ITERS * mt_size,
				      "%s %d: nic_atomics grew by %ld, want >= %d", what, k, grew,
				      2 * SMALL_ITERS * mt_size);
			else
				CHECK(grew == 0, "%s %d: nic_atomics grew by %ld, want 0", what, k,
				      grew);
		}
		if (mt_rank == 0)
			word_check(k == 0 ? (unsigned char *)mem : (unsigned char *)abase, what);
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		MPI_OK(MPI_Win_free(&win));
	}
}

/*
 * A value of accumulate_ops that MPI does not define promises nothing:
 * no atomics.  Open MPI 4.1 itself refuses the window (MPI_ERR_WIN from
 * its own MPI_Win_create, which the library makes too); MPICH takes it.
 */
static void undefined_value(int counters, int64_t *mem, MPI_Info bogus)
{
	MPI_Win win;
	int rc;

	memset(mem, 0, 64);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	rc = MPI_Win_create(mem, 64, 8, bogus, MPI_COMM_WORLD, &win);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	if (rc != MPI_SUCCESS) {
		CHECK(mt_class(rc) == MPI_ERR_WIN, "accumulate_ops=sum_only: class %d",
		      mt_class(rc));
		return;
	}
	mt_backend(win);
	expect_atomics(counters, counted(win, mem), 0, "accumulate_ops=sum_only");
	MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
	/* room for a 64-byte window 4 bytes in */
	static int64_t mem[16] __attribute__((aligned(8)));
	const char *real = getenv("MT_REAL_MPI");
	int counters = !(real && !strcmp(real, "1"));
	unsigned char *skew;
	MPI_Info info, same, bogus;
	int64_t *abase;
	MPI_Win win;
	long grew;

	mt_init(&argc, &argv);
	skew = (unsigned char *)mem + (mt_rank == 1 ? 4 : 0);
	MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
				   &node_comm));
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "accumulate_ops", "same_op_no_op"));
	MPI_OK(MPI_Info_create(&same));
	MPI_OK(MPI_Info_set(same, "accumulate_ops", "same_op"));
	MPI_OK(MPI_Info_create(&bogus));
	MPI_OK(MPI_Info_set(bogus, "accumulate_ops", "sum_only"));

	created(counters, mem, mem, info, 1, "same_op_no_op");
	MPI_OK(MPI_Win_allocate(sizeof(int64_t), 8, info, MPI_COMM_WORLD, &abase, &win));
	mt_backend(win);
	*abase = 0;
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	grew = counted(win, abase);
	expect_atomics(counters, grew, 1, "allocated, same_op_no_op");
	MPI_OK(MPI_Win_free(&win));
	created(counters, mem, mem, same, 1, "same_op");
	/* no key: MPI's default, same_op_no_op */
	created(counters, mem, mem, MPI_INFO_NULL, 1, "no info");
	undefined_value(counters, mem, bogus);
	/* rank 1's base is 4 bytes in: no rank uses the atomics (rank 0's counter is at 0) */
	if (mt_size > 1)
		created(counters, skew, mem, MPI_INFO_NULL, 0, "rank 1's base misaligned");

	/* 8-byte integers at misaligned offsets: refused with the atomics, fine without */
	misaligned(mem, counters ? MPI_ERR_ARG : MPI_SUCCESS);
	small_ints(counters, mem, 0);
	one_word(counters, mem, 1);
	setenv("RMAWIN_MPI_NIC_SMALL_INTS", "1", 1);
	small_ints(counters, mem, 1);
	setenv("RMAWIN_MPI_NIC_SMALL_INTS", "0", 1);
	one_word(counters, mem, 0);
	unsetenv("RMAWIN_MPI_NIC_SMALL_INTS");
	setenv("RMAWIN_MPI_SAME_OP", "0", 1);
	created(counters, mem, mem, MPI_INFO_NULL, 0, "RMAWIN_MPI_SAME_OP=0, no info");
	created(counters, mem, mem, info, 0, "RMAWIN_MPI_SAME_OP=0, same_op_no_op");
	misaligned(mem, MPI_SUCCESS);
	unsetenv("RMAWIN_MPI_SAME_OP");

	MPI_OK(MPI_Info_free(&bogus));
	MPI_OK(MPI_Info_free(&same));
	MPI_OK(MPI_Info_free(&info));
	MPI_OK(MPI_Comm_free(&node_comm));
	mt_done("same_op");
	return 0;
}
