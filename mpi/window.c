// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Windows.  MPI_Win_create and MPI_Win_allocate make two windows: the real
 * MPI's, over zero bytes, which keeps the group, the name, the error
 * handler, the info and the user's attributes; and an rmawin window over
 * the memory, found from the real one through an attribute of ours.
 * MPI_Win_get_attr answers the predefined window attributes from the rmawin
 * window.  Dynamic and shared-memory windows, and every window of a process
 * at MPI_THREAD_MULTIPLE (rmpi_threads_ok()), are left whole to the real
 * MPI: every call on a window without our attribute goes to PMPI.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rmawin_mpi.h"

#define RMPI_ALIGN	4096	/* MPI_Alloc_mem: whole pages pin best */

static int rmpi_win_keyval = MPI_KEYVAL_INVALID;
/* the last window looked up: most programs use one window at a time */
static MPI_Win rmpi_last_win = MPI_WIN_NULL;
static struct rmpi_win *rmpi_last;

#ifdef OPEN_MPI
/*
 * Open MPI 4.1's osc rdma names its shared-memory segment after the
 * communicator's CID, which the halves of an MPI_Comm_split share: windows
 * made at once on both halves on one node collide (open or unlink ENOENT,
 * MPI_ERR_WIN, or one window sees the other's data; seen with and without
 * this library).  The zero-byte windows made here need nothing of the real
 * MPI's RDMA, and osc ucx aborts over soft-RoCE: unless the user chose
 * (OMPI_MCA_osc set), Open MPI's own one-sided, which dynamic and shared
 * windows still use, is left to osc pt2pt and osc sm.  MPI_Init reads it.
 */
static int rmpi_osc_ours;	/* OMPI_MCA_osc is the default set here */

__attribute__((constructor)) static void rmpi_ompi_osc_default(void)
{
	if (getenv("OMPI_MCA_osc"))
		return;
	setenv("OMPI_MCA_osc", "^rdma,ucx", 1);
	rmpi_osc_ours = 1;
}

/*
 * At MPI_THREAD_MULTIPLE every window of a process is the real MPI's
 * (rmpi_threads_ok()), or, under RMAWIN_MPI_THREAD_MULTIPLE=1, has a
 * companion window of the real MPI's; osc pt2pt refuses both at that
 * level and aborts the job.  There osc rdma takes pt2pt's place: its
 * shared-memory names collide only for windows made at once on the halves
 * of one split communicator, a smaller harm than a job that cannot make a
 * window at all.  osc ucx stays out (it aborts over soft-RoCE).
 */
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	if (required == MPI_THREAD_MULTIPLE && rmpi_osc_ours)
		setenv("OMPI_MCA_osc", "^pt2pt,ucx", 1);
	return PMPI_Init_thread(argc, argv, required, provided);
}
#endif

/**
 * rmpi_win_lookup() - the rmawin side of an MPI window
 * @win: the real MPI's window
 *
 * Return: the state, or NULL for a window the real MPI runs alone
 * (dynamic, shared, MPI_WIN_NULL, or one made before the library was loaded).
 */
struct rmpi_win *rmpi_win_lookup(MPI_Win win)
{
	struct rmpi_win *w;
	int flag = 0;

	if (win == MPI_WIN_NULL || rmpi_win_keyval == MPI_KEYVAL_INVALID)
		return NULL;
	if (win == rmpi_last_win)
		return rmpi_last;
	if (PMPI_Win_get_attr(win, rmpi_win_keyval, &w, &flag) != MPI_SUCCESS || !flag)
		return NULL;
	rmpi_last_win = win;
	rmpi_last = w;
	return w;
}

/*
 * rmawin_mpi_win_backend() - 1 if rmawin carries @win's communication
 * Exported for tests and tools, which find it with dlsym().
 */
int rmawin_mpi_win_backend(MPI_Win win);
int rmawin_mpi_win_backend(MPI_Win win)
{
	return rmpi_win_lookup(win) != NULL;
}

/*
 * rmawin_mpi_win_ring() - whether @win's operations go through librmawin's
 *	ring (1) or one ioctl each (0); -1 for a window rmawin does not carry
 * Exported for tests and tools, which find it with dlsym().
 */
int rmawin_mpi_win_ring(MPI_Win win);
int rmawin_mpi_win_ring(MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);

	return w ? rmawin_ep_ring_active(w->grp->ep) == 1 : -1;
}

static int rmpi_keyval(void)
{
	if (rmpi_win_keyval != MPI_KEYVAL_INVALID)
		return MPI_SUCCESS;
	return PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN,
				      &rmpi_win_keyval, NULL);
}

/* Every rank's disp_unit, and the real window; collective. */
static int rmpi_win_attach_mpi(struct rmpi_win *w, void *base, MPI_Info info, MPI_Comm comm)
{
	int err;

	w->disp_units = malloc(sizeof(int) * (size_t)w->nranks);
	if (!w->disp_units)
		return MPI_ERR_NO_MEM;	/* as the collective below would fail anyway */
	err = PMPI_Allgather(&w->disp_unit, 1, MPI_INT, w->disp_units, 1, MPI_INT, comm);
	if (err != MPI_SUCCESS)
		return err;
	err = PMPI_Win_create(base, 0, 1, info, comm, &w->win);
	if (err != MPI_SUCCESS)
		return err;
	err = rmpi_keyval();
	if (err == MPI_SUCCESS)
		err = PMPI_Win_set_attr(w->win, rmpi_win_keyval, w);
	if (err != MPI_SUCCESS)
		PMPI_Win_free(&w->win);
	return err;
}

/*
 * Does RMAWIN_MPI_SAME_OP turn the device's atomics off?  Read at every
 * window creation (a program may set it between two).
 */
static int rmpi_same_op_off(void)
{
	const char *v = getenv("RMAWIN_MPI_SAME_OP");

	return v && !strcmp(v, "0");
}

/*
 * Lazy locks (rmawin_win_set_lazy_lock()), as MPI allows: an epoch of one
 * small operation is one message.  RMAWIN_MPI_LAZY_LOCK=0 takes every lock
 * at MPI_Win_lock, as before; read at every window creation.
 */
static void rmpi_win_lazy(struct rmawin_win *rw)
{
	const char *v = getenv("RMAWIN_MPI_LAZY_LOCK");
	int err;

	if (v && !strcmp(v, "0"))
		return;
	err = rmawin_win_set_lazy_lock(rw, 1);
	if (err)	/* an older kernel: the locks are taken eagerly */
		rmpi_debug("lazy locks: %s", rmawin_strerror(err));
}

/*
 * RMAWIN_WIN_SAME_OP, the device's atomics for 8-byte integer accumulates,
 * where MPI's info key accumulate_ops promises same_op or same_op_no_op,
 * and where it is absent: its default is same_op_no_op (MPI-3.1 11.2.1).
 * Any other value promises nothing.  Every rank's base and size must be
 * multiples of 8 (an allocated window's are: its size is rounded up) and
 * the ranks must agree: collective (the least of every rank's level).
 * RMAWIN_MPI_SAME_OP=0 turns it off, whatever the info says.
 *
 * RMAWIN_WIN_NIC_SMALL_INTS (integers of 1, 2 and 4 bytes on the device
 * too) on a window of at most one word on every rank (a counter, a flag):
 * every operation there is one device atomic, where the target's kernel
 * takes a message and its reply.  On larger windows an operation of many
 * small elements would take one device atomic per word, so only where
 * RMAWIN_MPI_NIC_SMALL_INTS=1 on every rank; =0 turns it off on every
 * window.
 */
static unsigned int rmpi_win_flags(MPI_Info info, const void *base, MPI_Aint size,
				   int alloc, MPI_Comm comm)
{
	const char *small = getenv("RMAWIN_MPI_NIC_SMALL_INTS");
	char val[MPI_MAX_INFO_VAL + 1];
	int flag = 0, same = 1, all = 0;

	if (info != MPI_INFO_NULL &&
	    PMPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL, val, &flag) == MPI_SUCCESS &&
	    flag)
		same = !strcmp(val, "same_op") || !strcmp(val, "same_op_no_op");
	if ((!alloc && ((uintptr_t)base % 8 || size % 8)) || rmpi_same_op_off())
		same = 0;
	if (same && (small ? !strcmp(small, "1") : size <= 8))
		same = 2;
	if (PMPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
		return 0;
	if (all == 2)
		return RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS;
	return all ? RMAWIN_WIN_SAME_OP : 0;
}

/*
 * May rmawin carry a window on @comm?  Our tables take one-sided calls
 * from one thread at a time, so not where a rank runs at
 * MPI_THREAD_MULTIPLE, unless RMAWIN_MPI_THREAD_MULTIPLE=1 promises just
 * that; else the window is the real MPI's, as a dynamic one is.
 * Collective: the ranks agree.
 */
static int rmpi_threads_ok(MPI_Comm comm)
{
	const char *v = getenv("RMAWIN_MPI_THREAD_MULTIPLE");
	int level = MPI_THREAD_SINGLE, ok, all = 0;

	if (PMPI_Query_thread(&level) != MPI_SUCCESS)
		level = MPI_THREAD_MULTIPLE;
	ok = level != MPI_THREAD_MULTIPLE || (v && !strcmp(v, "1"));
	if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
		return 0;
	if (!all)
		rmpi_debug("MPI_THREAD_MULTIPLE: the window is the real MPI's");
	return all;
}

/*
 * The common part of MPI_Win_create and MPI_Win_allocate: @base NULL with
 * @size > 0 means allocate.  Collective; errors through @comm's handler.
 */
static int rmpi_win_new(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
			void **alloc_base, MPI_Win *win)
{
	struct rmpi_win *w;
	unsigned int flags;
	int err, inter = 0;

	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return rmpi_comm_raise(comm, MPI_ERR_COMM);	/* no windows on intercomms */
	if (size < 0)
		return rmpi_comm_raise(comm, MPI_ERR_SIZE);
	if (disp_unit <= 0)
		return rmpi_comm_raise(comm, MPI_ERR_DISP);
	if (!rmpi_threads_ok(comm))
		return alloc_base ? PMPI_Win_allocate(size, disp_unit, info, comm, alloc_base, win) :
				    PMPI_Win_create(base, size, disp_unit, info, comm, win);
	w = calloc(1, sizeof(*w));
	if (!w)
		return rmpi_comm_raise(comm, MPI_ERR_NO_MEM);
	w->size = size;
	w->disp_unit = disp_unit;
	w->model = MPI_WIN_UNIFIED;
	w->flavor = alloc_base ? MPI_WIN_FLAVOR_ALLOCATE : MPI_WIN_FLAVOR_CREATE;
	PMPI_Comm_size(comm, &w->nranks);
	err = rmpi_group_get(comm, &w->grp);
	if (err) {
		rmpi_debug("no rmawin group: %s", rmawin_strerror(err));
		free(w);
		return rmpi_comm_raise(comm, MPI_ERR_OTHER);
	}
	/* an allocated window's size is ours to round up to the device's words */
	flags = rmpi_win_flags(info, base, size, !!alloc_base, comm);
	if (alloc_base && size)
		err = rmawin_win_allocate(w->grp->ep, (size_t)size + (flags ? (8 - size % 8) % 8 : 0),
					  1, flags, &w->base, &w->rw);
	else if (alloc_base)	/* nothing to allocate: an empty window */
		err = rmawin_win_create(w->grp->ep, NULL, 0, 1, flags, &w->rw);
	else
		err = rmawin_win_create(w->grp->ep, base, (size_t)size, 1, flags, &w->rw);
	if (!alloc_base)
		w->base = base;
	w->same_op = !!(flags & RMAWIN_WIN_SAME_OP);
	if (err) {
		rmpi_debug("rmawin window: %s", rmawin_strerror(err));
		err = err == -EREMOTEIO ? MPI_ERR_OTHER : rmpi_errclass(err);
		goto err_put_group;
	}
	rmpi_win_lazy(w->rw);
	err = rmpi_win_attach_mpi(w, w->base, info, comm);
	if (err != MPI_SUCCESS)
		goto err_free_rmawin;
	if (alloc_base)
		*alloc_base = w->base;
	*win = w->win;
	return MPI_SUCCESS;

err_free_rmawin:
	rmawin_win_free(w->rw);
err_put_group:
	rmpi_group_put(w->grp);
	free(w->disp_units);
	free(w);
	return rmpi_comm_raise(comm, err);
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
		   MPI_Win *win)
{
	return rmpi_win_new(base, size, disp_unit, info, comm, NULL, win);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
		     MPI_Win *win)
{
	return rmpi_win_new(NULL, size, disp_unit, info, comm, (void **)baseptr, win);
}

int MPI_Win_free(MPI_Win *win)
{
	struct rmpi_win *w = win ? rmpi_win_lookup(*win) : NULL;
	int err, code;

	if (!w)
		return PMPI_Win_free(win);
	err = rmawin_win_free(w->rw);
	code = rmpi_errclass(err);
	if (err)
		rmpi_debug("win_free: %s", rmawin_strerror(err));
	/* its operations are over: no request may lead to it any more */
	rmpi_req_settle(w, -1, code);
	rmpi_last_win = MPI_WIN_NULL;
	rmpi_last = NULL;
	if (code != MPI_SUCCESS)
		PMPI_Win_call_errhandler(*win, code);
	PMPI_Win_delete_attr(*win, rmpi_win_keyval);
	if (PMPI_Win_free(win) != MPI_SUCCESS && code == MPI_SUCCESS)
		code = MPI_ERR_WIN;
	rmpi_group_put(w->grp);
	free(w->disp_units);
	free(w);
	return code;
}

/*
 * The predefined attributes come from the rmawin window: the real one
 * covers zero bytes.  Everything else is the real MPI's.
 */
int MPI_Win_get_attr(MPI_Win win, int keyval, void *value, int *flag)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	void **out = value;

	if (!w || !value || !flag)
		return PMPI_Win_get_attr(win, keyval, value, flag);
	*flag = 1;
	if (keyval == MPI_WIN_BASE)
		*out = w->base;
	else if (keyval == MPI_WIN_SIZE)
		*out = &w->size;
	else if (keyval == MPI_WIN_DISP_UNIT)
		*out = &w->disp_unit;
	else if (keyval == MPI_WIN_CREATE_FLAVOR)
		*out = &w->flavor;
	else if (keyval == MPI_WIN_MODEL)
		*out = &w->model;
	else
		return PMPI_Win_get_attr(win, keyval, value, flag);
	return MPI_SUCCESS;
}

/*
 * Page-aligned memory: rmawin pins whatever it is given, so MPI_Alloc_mem
 * need not register anything; the memory is freed by MPI_Free_mem.
 */
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	void *p;

	(void)info;
	if (size < 0)
		return rmpi_comm_raise(MPI_COMM_WORLD, MPI_ERR_SIZE);
	if (posix_memalign(&p, RMPI_ALIGN, size ? (size_t)size : 1))
		return rmpi_comm_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
	free(base);
	return MPI_SUCCESS;
}
