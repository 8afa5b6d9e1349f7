// SPDX-License-Identifier: GPL-2.0
/*
 * Windows on several communicators at once: MPI_COMM_WORLD, the halves of
 * an MPI_Comm_split, and a duplicate freed right after the window was
 * made on it.  Also what the real MPI keeps for us: the predefined
 * attributes (answered from rmawin), the group, the name, user attributes
 * and info; a disp_unit that differs between ranks; a dynamic window,
 * which stays the real MPI's.
 */
#include <stdint.h>
#include "mpitest.h"

static void attrs(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor)
{
	MPI_Aint *psize;
	int *pdu, *pfl, *pmodel, flag;
	void *pbase;

	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &pbase, &flag));
	CHECK(flag && pbase == base, "MPI_WIN_BASE %p, not %p", pbase, base);
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &psize, &flag));
	CHECK(flag && *psize == size, "MPI_WIN_SIZE %ld", (long)*psize);
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &pdu, &flag));
	CHECK(flag && *pdu == disp_unit, "MPI_WIN_DISP_UNIT %d", *pdu);
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &pfl, &flag));
	CHECK(flag && *pfl == flavor, "MPI_WIN_CREATE_FLAVOR %d", *pfl);
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &pmodel, &flag));
	CHECK(flag && *pmodel == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d", *pmodel);
}

/* group, name, a user attribute and info go through the real MPI */
static void real_mpi_parts(MPI_Win win, MPI_Comm comm)
{
	MPI_Group wg, cg;
	char name[MPI_MAX_OBJECT_NAME];
	int len, cmp, kv, flag, val = 42, *pval;
	MPI_Info info;

	MPI_OK(MPI_Win_get_group(win, &wg));
	MPI_Comm_group(comm, &cg);
	MPI_Group_compare(wg, cg, &cmp);
	CHECK(cmp == MPI_IDENT, "window group differs from the communicator's: %d", cmp);
	MPI_Group_free(&wg);
	MPI_Group_free(&cg);
	MPI_OK(MPI_Win_set_name(win, "rmawin window"));
	MPI_OK(MPI_Win_get_name(win, name, &len));
	CHECK(!strcmp(name, "rmawin window"), "name '%s'", name);
	MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kv, NULL));
	MPI_OK(MPI_Win_set_attr(win, kv, &val));
	MPI_OK(MPI_Win_get_attr(win, kv, &pval, &flag));
	CHECK(flag && pval == &val, "user attribute");
	MPI_OK(MPI_Win_delete_attr(win, kv));
	MPI_OK(MPI_Win_free_keyval(&kv));
	MPI_OK(MPI_Win_get_info(win, &info));
	MPI_Info_free(&info);
}

/*
 * Each rank of @comm puts its world rank into slot [its comm rank] of
 * every other rank's window (disp_unit @du bytes per slot, differing
 * between ranks), then checks what it got.
 */
static void exchange(MPI_Comm comm, MPI_Win win, int64_t *mem, int du)
{
	int r, n, *world, got_du, *pdu, flag;

	MPI_Comm_rank(comm, &r);
	MPI_Comm_size(comm, &n);
	world = calloc(n, sizeof(int));
	MPI_Allgather(&mt_rank, 1, MPI_INT, world, 1, MPI_INT, comm);
	MPI_OK(MPI_Win_fence(0, win));
	for (int t = 0; t < n; t++) {
		int64_t v = 1000 + mt_rank;

		/* the target's unit: 8 on even comm ranks, 16 on odd ones */
		got_du = t % 2 ? 16 : 8;
		MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, r * 16 / got_du, 1, MPI_INT64_T, win));
	}
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &pdu, &flag));
	CHECK(*pdu == du, "disp_unit %d", *pdu);
	for (int o = 0; o < n; o++)
		CHECK(mem[o * 2] == 1000 + world[o], "slot %d: %ld, not %d", o, (long)mem[o * 2],
		      1000 + world[o]);
	free(world);
}

/* odd ranks expose nothing (MPI_Win_allocate of 0 bytes): rank 0 collects */
static void empty_ranks(void)
{
	MPI_Aint size = mt_rank % 2 ? 0 : 64 * 8, *psize;
	int64_t *m, v = 500 + mt_rank;
	int flag;
	MPI_Win w;

	MPI_OK(MPI_Win_allocate(size, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &m, &w));
	mt_backend(w);
	MPI_OK(MPI_Win_get_attr(w, MPI_WIN_SIZE, &psize, &flag));
	CHECK(flag && *psize == size, "empty window size %ld", (long)*psize);
	MPI_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Win_fence(0, w));
	MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, 0, mt_rank, 1, MPI_INT64_T, w));
	if (mt_size > 1 && !getenv("MT_REAL_MPI"))	/* rmawin checks, MPIs need not */
		CHECK(mt_class(MPI_Put(&v, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, w)) ==
		      MPI_ERR_RMA_RANGE, "a put into an empty window");
	MPI_OK(MPI_Win_fence(0, w));
	for (int o = 0; mt_rank == 0 && o < mt_size; o++)
		CHECK(m[o] == 500 + o, "collected slot %d: %ld", o, (long)m[o]);
	MPI_OK(MPI_Win_free(&w));
}

int main(int argc, char **argv)
{
	MPI_Comm half, dup;
	MPI_Win wworld, whalf, wdup, wdyn;
	int64_t *mworld, *mhalf, dbuf[64];
	int hr, hn, du, *pfl, flag;
	MPI_Info info;

	mt_init(&argc, &argv);
	CHECK(mt_size <= 32, "at most 32 ranks");
	MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half);
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hn);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);

	/* three windows alive together, on three communicators */
	MPI_Comm_rank(MPI_COMM_WORLD, &du);
	du = du % 2 ? 16 : 8;
	MPI_OK(MPI_Alloc_mem(64 * 8, MPI_INFO_NULL, &mworld));
	memset(mworld, 0, 64 * 8);
	MPI_Info_create(&info);
	MPI_Info_set(info, "no_locks", "true");
	MPI_Info_set(info, "accumulate_ordering", "none");
	MPI_OK(MPI_Win_create(mworld, 64 * 8, du, info, MPI_COMM_WORLD, &wworld));
	MPI_Info_free(&info);
	mt_backend(wworld);
	du = hr % 2 ? 16 : 8;
	MPI_OK(MPI_Win_allocate(64 * 8, du, MPI_INFO_NULL, half, &mhalf, &whalf));
	mt_backend(whalf);
	memset(dbuf, 0, sizeof(dbuf));
	MPI_OK(MPI_Win_create(dbuf, sizeof(dbuf), mt_rank % 2 ? 16 : 8, MPI_INFO_NULL, dup,
			      &wdup));
	MPI_Comm_free(&dup);	/* the window keeps its rmawin group */
	mt_backend(wdup);

	attrs(wworld, mworld, 64 * 8, mt_rank % 2 ? 16 : 8, MPI_WIN_FLAVOR_CREATE);
	attrs(whalf, mhalf, 64 * 8, du, MPI_WIN_FLAVOR_ALLOCATE);
	real_mpi_parts(wworld, MPI_COMM_WORLD);
	real_mpi_parts(whalf, half);

	exchange(MPI_COMM_WORLD, wworld, mworld, mt_rank % 2 ? 16 : 8);
	exchange(half, whalf, mhalf, du);
	exchange(MPI_COMM_WORLD, wdup, dbuf, mt_rank % 2 ? 16 : 8);

	/* a second window on the same half: the same group, reused */
	MPI_OK(MPI_Win_free(&whalf));
	MPI_OK(MPI_Win_allocate(64 * 8, du, MPI_INFO_NULL, half, &mhalf, &whalf));
	mt_backend(whalf);
	exchange(half, whalf, mhalf, du);

	/* dynamic windows are the real MPI's */
	MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wdyn));
	if (!getenv("MT_REAL_MPI"))
		CHECK(mt_win_backend(wdyn) == 0, "a dynamic window is left to the real MPI");
	MPI_OK(MPI_Win_get_attr(wdyn, MPI_WIN_CREATE_FLAVOR, &pfl, &flag));
	CHECK(flag && *pfl == MPI_WIN_FLAVOR_DYNAMIC, "dynamic flavor %d", *pfl);
	MPI_OK(MPI_Win_free(&wdyn));

	MPI_OK(MPI_Win_free(&wdup));
	MPI_OK(MPI_Win_free(&whalf));
	MPI_OK(MPI_Win_free(&wworld));
	MPI_OK(MPI_Free_mem(mworld));
	MPI_Comm_free(&half);
	empty_ranks();
	mt_done("comms");
	return 0;
}
