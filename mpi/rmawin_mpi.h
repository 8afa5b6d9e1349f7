/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * rmawin-mpi: MPI-3 one-sided communication on rmawin, by PMPI interposition.
 *
 * One private header for the files of the library: group.c (one rmawin
 * group per communicator), window.c (window setup, attributes, memory),
 * datatype.c (datatypes and ops mapped to rmawin's, derived datatypes
 * flattened), ops.c (the communication calls), sync.c (synchronization) and
 * errors.c (errno to MPI error class, the window's error handler).
 *
 * The same sources are compiled once against Open MPI and once against
 * MPICH: nothing here may assume what an MPI handle is.
 */
#ifndef RMAWIN_MPI_H
#define RMAWIN_MPI_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include <rmawin.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * struct rmpi_group - the rmawin group of one communicator
 * @ep: the endpoint, joined to the group of the communicator's ranks
 * @batch: operations of derived datatypes are gathered here, then submitted
 * @refs: the communicator's attribute holds one, every window one more
 */
struct rmpi_group {
	struct rmawin_ep *ep;
	struct rmawin_batch *batch;
	int refs;
};

/*
 * struct rmpi_win - an MPI window backed by an rmawin window
 * @win: the real MPI's window (zero bytes), which keeps the group, the
 *	name, the error handler and the user's attributes
 * @rw: the rmawin window (disp_unit 1: displacements are scaled here)
 * @grp: the communicator's group, referenced
 * @base: this rank's memory
 * @size: its length in bytes
 * @disp_unit: this rank's displacement unit
 * @flavor: MPI_WIN_FLAVOR_CREATE or MPI_WIN_FLAVOR_ALLOCATE
 * @model: MPI_WIN_UNIFIED: the device writes the process's own memory
 * @nranks: ranks in the window's communicator
 * @disp_units: every rank's displacement unit
 * @same_op: the rmawin window is RMAWIN_WIN_SAME_OP (accumulate_ops, or
 *	its default): 8-byte integer accumulates take the device's atomics
 */
struct rmpi_win {
	MPI_Win win;
	struct rmawin_win *rw;
	struct rmpi_group *grp;
	void *base;
	MPI_Aint size;
	int disp_unit;
	int flavor;
	int model;
	int nranks;
	int *disp_units;
	int same_op;
};

/* group.c */
int rmpi_group_get(MPI_Comm comm, struct rmpi_group **grp);
void rmpi_group_put(struct rmpi_group *grp);

/* window.c */
struct rmpi_win *rmpi_win_lookup(MPI_Win win);

/*
 * struct rmpi_layout - where a (count, datatype) pair's bytes are
 * @blk: @n blocks of (offset from the buffer, length), in type map order
 * @n: number of blocks
 * @cap: room at @blk
 * @basic: the predefined datatype of the elements, MPI_DATATYPE_NULL if
 *	there are none yet
 * @mixed: elements of more than one predefined datatype
 * @one: storage for @blk when there is a single block
 */
struct rmpi_block {
	MPI_Aint off;
	MPI_Aint len;
};

struct rmpi_layout {
	struct rmpi_block *blk;
	size_t n;
	size_t cap;
	MPI_Datatype basic;
	int mixed;
	struct rmpi_block one;
};

/* request.c */
void rmpi_req_settle(struct rmpi_win *w, int target, int code);

/* datatype.c */
int rmpi_layout_build(MPI_Datatype type, int count, struct rmpi_layout *l);
void rmpi_layout_free(struct rmpi_layout *l);
MPI_Aint rmpi_layout_bytes(const struct rmpi_layout *l);
int rmpi_type_to_rmawin(MPI_Datatype type, enum rmawin_type *rt, int *size);
int rmpi_op_to_rmawin(MPI_Op op, enum rmawin_type rt, enum rmawin_op *ro);

/* errors.c */
int rmpi_errclass(int err);
int rmpi_win_raise(MPI_Win win, int code);
int rmpi_comm_raise(MPI_Comm comm, int code);
int rmpi_debug_on(void);
void rmpi_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* RMAWIN_MPI_H */
