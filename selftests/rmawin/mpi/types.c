// SPDX-License-Identifier: GPL-2.0
/*
 * Datatypes: every predefined C datatype put and read back; derived
 * datatypes (vector, indexed, hvector, struct) on either side; the
 * accumulate family summed over every rank and checked; the request-based
 * operations; MINLOC and MAXLOC on the 8-byte pair types.  Window: MPI_Win_allocate, 4 KiB per rank, disp_unit 1.
 */
#include <complex.h>
#include <stdint.h>
#include "mpitest.h"

#define WIN_BYTES 4096

static unsigned char *mem;
static MPI_Win win;

/* fill @len bytes with a pattern of (@seed, byte index) */
static void pattern(unsigned char *p, int len, int seed)
{
	for (int i = 0; i < len; i++)
		p[i] = (unsigned char)(seed * 31 + i * 7 + 1);
}

/* each predefined type: 5 elements to the right neighbour, which compares */
static void predefined(void)
{
	MPI_Datatype types[] = {
		MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT,
		MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
		MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE,
		MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T,
		MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX,
		MPI_C_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_2INT, MPI_FLOAT_INT,
	};
	int n = sizeof(types) / sizeof(types[0]), right = (mt_rank + 1) % mt_size;
	int left = (mt_rank + mt_size - 1) % mt_size, size;
	unsigned char src[256], want[256];

	for (int i = 0; i < n; i++) {
		MPI_Type_size(types[i], &size);
		pattern(src, 5 * size, mt_rank + i);
		MPI_OK(MPI_Win_fence(0, win));
		MPI_OK(MPI_Put(src, 5, types[i], right, 64, 5, types[i], win));
		MPI_OK(MPI_Win_fence(0, win));
		pattern(want, 5 * size, left + i);
		CHECK(!memcmp(mem + 64, want, 5 * size), "predefined type #%d", i);
		/* and read back by a get from the left */
		memset(src, 0, sizeof(src));
		MPI_OK(MPI_Get(src, 5, types[i], left, 64, 5, types[i], win));
		MPI_OK(MPI_Win_fence(0, win));
		pattern(want, 5 * size, (left + mt_size - 1) % mt_size + i);
		CHECK(!memcmp(src, want, 5 * size), "get of predefined type #%d", i);
	}
}

/* the MINLOC/MAXLOC pairs have holes: only their members move */
static void pairs(void)
{
	struct { short s; int i; } si[3], gsi[3];
	struct { double d; int i; } di[3], gdi[3];
	int right = (mt_rank + 1) % mt_size;

	memset(si, 0xee, sizeof(si));
	memset(di, 0xee, sizeof(di));
	for (int k = 0; k < 3; k++) {
		si[k].s = (short)(mt_rank + k);
		si[k].i = mt_rank * 10 + k;
		di[k].d = mt_rank + 0.25 * k;
		di[k].i = -k;
	}
	memset(gsi, 0, sizeof(gsi));
	memset(gdi, 0, sizeof(gdi));
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Put(si, 3, MPI_SHORT_INT, right, 1024, 3, MPI_SHORT_INT, win));
	MPI_OK(MPI_Put(di, 3, MPI_DOUBLE_INT, right, 2048, 3, MPI_DOUBLE_INT, win));
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Get(gsi, 3, MPI_SHORT_INT, right, 1024, 3, MPI_SHORT_INT, win));
	MPI_OK(MPI_Get(gdi, 3, MPI_DOUBLE_INT, right, 2048, 3, MPI_DOUBLE_INT, win));
	MPI_OK(MPI_Win_fence(0, win));
	for (int k = 0; k < 3; k++) {
		CHECK(gsi[k].s == si[k].s && gsi[k].i == si[k].i, "short_int %d", k);
		CHECK(gdi[k].d == di[k].d && gdi[k].i == di[k].i, "double_int %d", k);
	}
}

/* contiguous origin, vector target and back: every other int */
static void derived(void)
{
	int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
	int src[8], back[8], *w = (int *)mem, blens[3] = { 1, 2, 1 }, displs[3] = { 0, 3, 7 };
	MPI_Datatype vec, idx, hvec, st;
	int sblens[2] = { 1, 1 };
	MPI_Aint sdispls[2] = { 0, 12 };
	MPI_Datatype stypes[2] = { MPI_INT, MPI_INT };

	MPI_Type_vector(8, 1, 2, MPI_INT, &vec);		/* 8 ints, stride 2 */
	MPI_Type_commit(&vec);
	MPI_Type_indexed(3, blens, displs, MPI_INT, &idx);	/* ints 0, 3, 4, 7 */
	MPI_Type_commit(&idx);
	MPI_Type_create_hvector(2, 1, 8, MPI_INT, &hvec);	/* ints 0 and 2 */
	MPI_Type_commit(&hvec);
	MPI_Type_create_struct(2, sblens, sdispls, stypes, &st);	/* ints 0 and 3 */
	MPI_Type_commit(&st);
	for (int i = 0; i < 8; i++)
		src[i] = mt_rank * 1000 + i;
	memset(mem, 0, WIN_BYTES);
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Put(src, 8, MPI_INT, right, 0, 1, vec, win));
	MPI_OK(MPI_Win_fence(0, win));
	for (int i = 0; i < 16; i++)
		CHECK(w[i] == (i % 2 ? 0 : left * 1000 + i / 2), "vector slot %d = %d", i, w[i]);
	/* indexed origin: the first 4 ints of what I spread land in ints 0, 3, 4, 7 */
	memset(back, 0, sizeof(back));
	MPI_OK(MPI_Get(back, 1, idx, right, 0, 4, MPI_INT, win));
	MPI_OK(MPI_Win_fence(0, win));
	CHECK(back[0] == mt_rank * 1000 && back[3] == 0 && back[4] == mt_rank * 1000 + 1 &&
	      back[7] == 0, "indexed get: %d %d %d %d", back[0], back[3], back[4], back[7]);
	/* hvector origin, struct target: src[0], src[2] to ints 100 and 103 */
	MPI_OK(MPI_Put(src, 1, hvec, right, 400, 1, st, win));
	MPI_OK(MPI_Win_fence(0, win));
	CHECK(w[100] == left * 1000 && w[103] == left * 1000 + 2 && w[101] == 0,
	      "hvector->struct: %d %d %d", w[100], w[101], w[103]);
	MPI_Type_free(&vec);
	MPI_Type_free(&idx);
	MPI_Type_free(&hvec);
	MPI_Type_free(&st);
}

/* every rank adds into rank 0; rank 0 checks the sums */
static void accumulate(void)
{
	int64_t l = mt_rank + 1, *wl = (int64_t *)(mem + 0);
	double d = 0.5 * (mt_rank + 1), *wd = (double *)(mem + 8);
	int iv[4] = { mt_rank, mt_rank, mt_rank, mt_rank }, *wi = (int *)(mem + 16);
	uint32_t band = ~(1u << mt_rank), *wb = (uint32_t *)(mem + 48);
	int n = mt_size, tri = n * (n + 1) / 2;
	MPI_Datatype vec;

	MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	memset(mem, 0, WIN_BYTES);
	*wb = ~0u;
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Accumulate(&l, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_SUM, win));
	MPI_OK(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 8, 1, MPI_DOUBLE, MPI_SUM, win));
	MPI_OK(MPI_Accumulate(iv, 4, MPI_INT, 0, 16, 1, vec, MPI_MAX, win));
	MPI_OK(MPI_Accumulate(&band, 1, MPI_UINT32_T, 0, 48, 1, MPI_UINT32_T, MPI_BAND, win));
	MPI_OK(MPI_Win_fence(0, win));
	if (mt_rank == 0) {
		CHECK(*wl == tri, "int64 sum %lld", (long long)*wl);
		CHECK(*wd == 0.5 * tri, "double sum %g", *wd);
		for (int i = 0; i < 8; i++)
			CHECK(wi[i] == (i % 2 ? 0 : n - 1), "vector max slot %d = %d", i, wi[i]);
		CHECK(*wb == ~((1u << n) - 1), "band %#x", *wb);
	}
	MPI_Type_free(&vec);
}

/* fetch_and_op, compare_and_swap and get_accumulate on rank 0's counters */
static void atomics(void)
{
	long one = 1, prev, *wl = (long *)mem, seen[64], zero = 0, mine = mt_rank + 100, got;
	int n = mt_size, iv[2] = { 1, 2 }, old[2], *wi = (int *)(mem + 64);

	memset(mem, 0, WIN_BYTES);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Fetch_and_op(&one, &prev, MPI_LONG, 0, 0, MPI_SUM, win));
	MPI_OK(MPI_Win_flush(0, win));
	CHECK(prev >= 0 && prev < n, "ticket %ld", prev);
	/* one rank wins the swap of slot 1 from 0 */
	MPI_OK(MPI_Compare_and_swap(&mine, &zero, &got, MPI_LONG, 0, 8, win));
	MPI_OK(MPI_Get_accumulate(iv, 2, MPI_INT, old, 2, MPI_INT, 0, 64, 2, MPI_INT, MPI_SUM,
				  win));
	MPI_OK(MPI_Win_unlock_all(win));
	/* the tickets are a permutation of 0..n-1 */
	MPI_Allgather(&prev, 1, MPI_LONG, seen, 1, MPI_LONG, MPI_COMM_WORLD);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			CHECK(seen[i] != seen[j], "tickets %d and %d are both %ld", i, j, seen[i]);
	/* atomic per element: each element saw some number of earlier sums */
	CHECK(old[0] >= 0 && old[0] < n && old[1] % 2 == 0 && old[1] >= 0 && old[1] < 2 * n,
	      "get_acc old %d %d", old[0], old[1]);
	MPI_Barrier(MPI_COMM_WORLD);
	if (mt_rank == 0) {
		CHECK(wl[0] == n, "counter %ld", wl[0]);
		CHECK(wl[1] >= 100 && wl[1] < 100 + n, "cas winner %ld", wl[1]);
		CHECK(wi[0] == n && wi[1] == 2 * n, "get_acc sums %d %d", wi[0], wi[1]);
	}
	/* NO_OP reads */
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	MPI_OK(MPI_Fetch_and_op(NULL, &got, MPI_LONG, 0, 0, MPI_NO_OP, win));
	MPI_OK(MPI_Win_unlock(0, win));
	CHECK(got == n, "no_op read %ld", got);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Rput, Rget, Raccumulate, Rget_accumulate in a lock_all epoch */
static void requests(void)
{
	int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
	int v = mt_rank + 7, back = -1, one = 1, old = -1, *wi = (int *)mem;
	MPI_Request r[4];

	memset(mem, 0, WIN_BYTES);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Rput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r[0]));
	MPI_OK(MPI_Raccumulate(&one, 1, MPI_INT, right, 4, 1, MPI_INT, MPI_SUM, win, &r[1]));
	MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
	MPI_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
	MPI_OK(MPI_Win_flush(right, win));
	MPI_OK(MPI_Rget(&back, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r[2]));
	MPI_OK(MPI_Rget_accumulate(&one, 1, MPI_INT, &old, 1, MPI_INT, right, 4, 1, MPI_INT,
				   MPI_SUM, win, &r[3]));
	MPI_OK(MPI_Wait(&r[2], MPI_STATUS_IGNORE));
	MPI_OK(MPI_Wait(&r[3], MPI_STATUS_IGNORE));
	CHECK(back == v, "rget read %d", back);
	CHECK(old == 1, "rget_accumulate old %d", old);
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(wi[0] == left + 7 && wi[1] == 2, "requests landed: %d %d", wi[0], wi[1]);
}

/*
 * MINLOC and MAXLOC on the 8-byte pair types, from every rank to rank 0
 * at once under lock_all: accumulate MINLOC on MPI_2INT (ties to the
 * smallest index), get_accumulate MAXLOC on MPI_FLOAT_INT through a
 * vector of two, fetch_and_op MINLOC on MPI_SHORT_INT (whose hole must
 * survive), then REPLACE and a NO_OP read.
 */
struct float_int { float v; int i; };
struct short_int { short v; int i; };

static void minloc(void)
{
	int *p2 = (int *)mem;			/* 2 x MPI_2INT at 0 */
	struct float_int *pf = (struct float_int *)(mem + 64);	/* 2 at 64 */
	struct short_int *ps = (struct short_int *)(mem + 128);	/* 1 at 128 */
	int in2[4] = { 100 - mt_rank % 2, mt_rank, 50 + mt_rank, mt_rank };
	struct float_int fin[2] = { { 0.5f * mt_rank, mt_rank }, { -1.0f * mt_rank, mt_rank } };
	struct float_int fold[2];
	struct short_int sin = { (short)(-mt_rank), mt_rank }, sold, rep = { 7, 7 };
	int last = mt_size - 1;
	MPI_Datatype vec;

	if (mt_rank == 0) {
		p2[0] = 1000, p2[1] = -1, p2[2] = 1000, p2[3] = -1;
		pf[0] = (struct float_int){ -5.0f, -1 };
		pf[1] = (struct float_int){ -5.0f, -1 };
		memset(ps, 0x5a, sizeof(*ps));
		ps->v = 0, ps->i = 99;
	}
	MPI_OK(MPI_Type_vector(2, 1, 1, MPI_FLOAT_INT, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Accumulate(in2, 2, MPI_2INT, 0, 0, 2, MPI_2INT, MPI_MINLOC, win));
	MPI_OK(MPI_Get_accumulate(fin, 1, vec, fold, 2, MPI_FLOAT_INT, 0, 64, 1, vec,
				  MPI_MAXLOC, win));
	MPI_OK(MPI_Fetch_and_op(&sin, &sold, MPI_SHORT_INT, 0, 128, MPI_MINLOC, win));
	MPI_OK(MPI_Win_flush(0, win));
	CHECK(fold[0].v >= -5.0f && fold[0].v <= 0.5f * last, "maxloc fetched %g", fold[0].v);
	CHECK(sold.v <= 0 && sold.v > -mt_size, "minloc fetched %d", sold.v);
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (mt_rank == 0) {
		/* 100 - rank % 2 is least (99) on the odd ranks, the first of them 1 */
		CHECK(p2[0] == (mt_size > 1 ? 99 : 100) && p2[1] == (mt_size > 1 ? 1 : 0),
		      "minloc (%d, %d)", p2[0], p2[1]);
		CHECK(p2[2] == 50 && p2[3] == 0, "minloc (%d, %d)", p2[2], p2[3]);
		CHECK(pf[0].v == 0.5f * last && pf[0].i == last, "maxloc (%g, %d)", pf[0].v,
		      pf[0].i);
		/* the values are -rank and the -5 from the start: rank 0's -0 wins */
		CHECK(pf[1].v == 0.0f && pf[1].i == 0, "maxloc (%g, %d)", pf[1].v, pf[1].i);
		CHECK(ps->v == -last && ps->i == last, "minloc short (%d, %d)", ps->v, ps->i);
		CHECK(((unsigned char *)ps)[2] == 0x5a && ((unsigned char *)ps)[3] == 0x5a,
		      "MPI_SHORT_INT's hole written");
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (mt_rank == last) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
		MPI_OK(MPI_Accumulate(&rep, 1, MPI_SHORT_INT, 0, 128, 1, MPI_SHORT_INT,
				      MPI_REPLACE, win));
		MPI_OK(MPI_Fetch_and_op(NULL, &sold, MPI_SHORT_INT, 0, 128, MPI_NO_OP, win));
		MPI_OK(MPI_Win_unlock(0, win));
		CHECK(sold.v == 7 && sold.i == 7, "replace then no_op read (%d, %d)", sold.v,
		      sold.i);
	}
	MPI_OK(MPI_Type_free(&vec));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	CHECK(mt_size <= 64, "at most 64 ranks");
	MPI_OK(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
	mt_backend(win);
	MPI_OK(MPI_Win_fence(0, win));
	predefined();
	pairs();
	derived();
	accumulate();
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	atomics();
	requests();
	minloc();
	MPI_OK(MPI_Win_free(&win));
	mt_done("types");
	return 0;
}
