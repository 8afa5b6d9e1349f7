// SPDX-License-Identifier: GPL-2.0
/*
 * Errors come back as the exact MPI error class, through the window's
 * error handler: first MPI_ERRORS_RETURN, then a handler of our own that
 * counts the classes it is called with.  Window creation errors go
 * through the communicator's handler.
 */
#include "mpitest.h"

static int handler_calls, handler_last;

static void count_errors(MPI_Win *win, int *code, ...)
{
	(void)win;
	handler_calls++;
	MPI_Error_class(*code, &handler_last);
}

#define EXPECT(cls, call)							\
	do {									\
		int mt_c_ = mt_class(call);					\
		CHECK(mt_c_ == (cls), "%s: class %d, expected %s (%d)", #call,	\
		      mt_c_, #cls, (cls));					\
	} while (0)

/* errors that need no epoch, or are about the epoch */
static void sync_errors(MPI_Win win, int *buf)
{
	int v = 1, pair[2] = { 1, 2 };

	/* no epoch yet: no access to anyone */
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock(0, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_flush(0, win));
	/* MINLOC's compare-and-swap loop needs a passive-target epoch */
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Accumulate(pair, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MINLOC,
						win));
	EXPECT(MPI_ERR_LOCKTYPE, MPI_Win_lock(12345, 0, 0, win));
	EXPECT(MPI_ERR_RANK, MPI_Win_lock(MPI_LOCK_SHARED, mt_size, 0, win));
	/* locked twice */
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	MPI_OK(MPI_Win_unlock(0, win));
	(void)buf;
}

/* argument errors inside a valid epoch */
static void op_errors(MPI_Win win)
{
	double d = 1.0;
	int v[2] = { 1, 2 }, pair[2] = { 3, 4 }, res[2];
	long double ld = 1.0L;
	struct { double v; int i; } dpair = { 1.0, 0 };

	MPI_OK(MPI_Win_lock_all(0, win));
	EXPECT(MPI_ERR_RANK, MPI_Put(v, 1, MPI_INT, mt_size, 0, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RANK, MPI_Get(v, 1, MPI_INT, -5, 0, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(v, 1, MPI_INT, 0, 1024, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Get(v, 2, MPI_INT, 0, 255, 2, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(v, 1, MPI_INT, 0, -1, 1, MPI_INT, win));
	EXPECT(MPI_ERR_COUNT, MPI_Put(v, -1, MPI_INT, 0, 0, -1, MPI_INT, win));
	EXPECT(MPI_ERR_TYPE, MPI_Put(v, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win));
	EXPECT(MPI_ERR_TYPE, MPI_Put(v, 2, MPI_INT, 0, 0, 1, MPI_INT, win));
	EXPECT(MPI_ERR_OP, MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_BAND, win));
	EXPECT(MPI_ERR_OP, MPI_Accumulate(v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win));
	/* MINLOC/MAXLOC: 8-byte pairs only (a 16-byte one needs a 16-byte CAS) */
	EXPECT(MPI_ERR_TYPE, MPI_Accumulate(&dpair, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT,
					    MPI_MINLOC, win));
	EXPECT(MPI_ERR_OP, MPI_Accumulate(v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_MAXLOC, win));
	EXPECT(MPI_ERR_TYPE, MPI_Accumulate(pair, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_SUM, win));
	EXPECT(MPI_ERR_TYPE, MPI_Accumulate(&ld, 1, MPI_LONG_DOUBLE, 0, 0, 1, MPI_LONG_DOUBLE,
					    MPI_SUM, win));
	EXPECT(MPI_ERR_TYPE, MPI_Accumulate(v, 1, MPI_INT, 0, 0, 1, MPI_FLOAT, MPI_SUM, win));
	EXPECT(MPI_ERR_OP, MPI_Fetch_and_op(&d, res, MPI_DOUBLE, 0, 0, MPI_BXOR, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Compare_and_swap(&v[0], &v[1], res, MPI_INT, 0, 256,
						       win));
	/* MPI_PROC_NULL is no error and no transfer */
	MPI_OK(MPI_Put(v, 1, MPI_INT, MPI_PROC_NULL, 1 << 30, 1, MPI_INT, win));
	MPI_OK(MPI_Win_unlock_all(win));
}

int main(int argc, char **argv)
{
	MPI_Errhandler eh;
	MPI_Win win, bad;
	int *buf, v = 1;

	mt_init(&argc, &argv);
	MPI_OK(MPI_Win_allocate(1024, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win));
	mt_backend(win);
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	sync_errors(win, buf);
	op_errors(win);

	/* a handler of our own sees the class, and the call still returns it */
	MPI_OK(MPI_Win_create_errhandler(count_errors, &eh));
	MPI_OK(MPI_Win_set_errhandler(win, eh));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
	CHECK(handler_calls == 1 && handler_last == MPI_ERR_RMA_SYNC, "handler: %d calls, %d",
	      handler_calls, handler_last);
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(&v, 1, MPI_INT, 0, 4096, 1, MPI_INT, win));
	MPI_OK(MPI_Win_unlock(0, win));
	CHECK(handler_calls == 2 && handler_last == MPI_ERR_RMA_RANGE, "handler: %d calls, %d",
	      handler_calls, handler_last);
	MPI_Errhandler_free(&eh);

	/* creation errors: the communicator's handler */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	EXPECT(MPI_ERR_DISP, MPI_Win_create(buf, 16, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bad));
	EXPECT(MPI_ERR_SIZE, MPI_Win_create(buf, -16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &bad));
	EXPECT(MPI_ERR_SIZE, MPI_Alloc_mem(-1, MPI_INFO_NULL, &bad));

	MPI_OK(MPI_Win_free(&win));
	mt_done("errors");
	return 0;
}
