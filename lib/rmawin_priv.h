/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * librmawin private declarations: object layouts and helpers shared by the
 * library's files.  Helpers are named rmawin__*; librmawin.map keeps them
 * out of the shared library's exported symbols.
 */
#ifndef RMAWIN_PRIV_H
#define RMAWIN_PRIV_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/rmawin.h>

#include "rmawin.h"

#define RMAWIN_DEFAULT_DEV	"/dev/rmawin"

#define RMAWIN_EP_KNOWN_FLAGS	(RMAWIN_EP_NO_RING)

/**
 * struct rmawin_ep - an endpoint: one open /dev/rmawin
 * @fd: the open device; the kernel endpoint lives as long as it is open
 * @rank: this process's rank
 * @nranks: group size
 * @flags: RMAWIN_EP_* flags it was opened with
 * @timeout_ms: group setup timeout, 0 = library default
 * @ibdev: name of the RDMA device it is bound to
 * @addrs: @nranks parsed listen addresses indexed by rank, or NULL when none
 *	were given (a group of one)
 * @ring: the mmap'd rings (ring.c), or NULL: every call is an ioctl
 * @wins: its windows, newest first: a queued operation's error is its
 *	window's to report
 * @lock: @wins and every window's @epoch, for the endpoint's threads; never
 *	held across a system call that may wait for peers
 * @issue: tickets of the calls that hand operations to the kernel, above
 *	RMAWIN_ISSUE_SHIFT, and how many such calls are under way, below it
 *	(rma.c); read and changed atomically
 * @rma_quiet: the kernel has RMAWIN_RMA_QUIET
 * @nic_ints: the kernel takes integers of every size to the device on every
 *	same_op window (RMAWIN_FEAT_NIC_INT_ATOMICS without
 *	RMAWIN_FEAT_NIC_SMALL_FLAG), as if each had RMAWIN_WIN_NIC_SMALL_INTS
 * @epoch_op: the kernel has RMAWIN_FEAT_EPOCH_OP
 * @lazy_all: the kernel has RMAWIN_FEAT_LAZY_LOCK_ALL
 * @carry: the kernel has RMAWIN_FEAT_COMPLETE_OP and RMAWIN_NO_CARRY is
 *	not set: a PSCW epoch's one small operation goes in its COMPLETE
 */
struct rmawin_ep {
	int fd;
	int rank;
	int nranks;
	unsigned int flags;
	unsigned int timeout_ms;
	char ibdev[RMAWIN_DEVNAME_MAX];
	struct sockaddr_storage *addrs;
	struct rmawin__ring *ring;
	struct rmawin_win *wins;
	pthread_mutex_t lock;
	uint64_t issue;
	int rma_quiet;
	int nic_ints;
	int epoch_op;
	int lazy_all;
	int carry;
};

#define RMAWIN_ISSUE_SHIFT	24

/**
 * struct rmawin_win - a window
 * @ep: the endpoint it was created on
 * @base: start of the local memory
 * @size: its length in bytes
 * @disp_unit: unit of target displacements, in bytes
 * @flags: flags it was created with
 * @id: the kernel's handle for it
 * @allocated: the kernel allocated @base (rmawin_win_allocate), so freeing
 *	the window also unmaps it
 * @next: the endpoint's next window
 * @ranks: every rank's length and unit (RMAWIN_IOC_WIN_INFO), or NULL if
 *	the kernel cannot say: operations are then not queued
 * @error: the first error of a queued operation, for the next
 *	synchronization of the window to return (set and taken atomically)
 * @epoch: what the library knows of the window's epochs (epoch.c)
 * @quiet: the ticket of @ep->issue after which the kernel said the window
 *	had nothing in flight (RMAWIN_RMA_QUIET), else ~0: while no call has
 *	taken a ticket since, a flush has nothing to do (rma.c)
 * @lazy: rmawin_win_set_lazy_lock(): a lock may be noted, not taken
 * @late: the lock noted and the operation kept for it, or the PSCW access
 *	epoch of one target whose first operation may wait for its COMPLETE
 *	(lazy.c), under @ep->lock
 */
struct rmawin_win {
	struct rmawin_ep *ep;
	void *base;
	size_t size;
	unsigned int disp_unit;
	unsigned int flags;
	uint32_t id;
	int allocated;
	struct rmawin_win *next;
	struct rmawin_win_rank *ranks;
	int error;
	struct rmawin__epoch {
		int unknown;		/* a synchronization failed: let the kernel judge */
		int fence_open;		/* the last fence opened an access epoch */
		int started;		/* a PSCW access epoch is open */
		int nheld;		/* passive-target locks held */
		unsigned char *access;	/* per rank: in the PSCW access epoch */
		unsigned char *held;	/* per rank: locked */
	} epoch;
	uint64_t quiet;
	int lazy;
	struct rmawin__late {
		int pending;		/* a lock of @target is noted, not taken */
		int pscw;		/* no: the access epoch to @target is started */
		uint32_t target;	/* RMAWIN_ALL_RANKS: a lock_all, our own lock taken */
		uint32_t type;		/* RMAWIN_LOCK_TYPE_* */
		int nops;		/* 1: @op is kept for the epoch */
		struct rmawin_op_desc op;
	} late;
};

/* syscall.c */
int rmawin__open_dev(void);
int rmawin__ioctl(int fd, unsigned long request, void *arg, uint32_t size);

/*
 * Every ioctl struct starts with __u32 size; pass the struct, not a size,
 * so the size can never disagree with the struct.
 */
#define rmawin__ioctl_struct(fd, request, s) \
	rmawin__ioctl((fd), (request), (s), sizeof(*(s)))

/* ring.c */
int rmawin__ring_setup(struct rmawin_ep *ep);
void rmawin__ring_free(struct rmawin_ep *ep);
int rmawin__ring_queue(struct rmawin_ep *ep, const struct rmawin_op_desc *op, uint64_t ticket);
void rmawin__ring_drain(struct rmawin_ep *ep);
void rmawin__ring_catch_up(struct rmawin_ep *ep);
int rmawin__ring_bypass(struct rmawin_ep *ep);
int rmawin__ring_taken(const struct rmawin_ep *ep);
unsigned int rmawin__ring_run(struct rmawin_ep *ep, struct rmawin_op_desc *ops, unsigned int n,
			      int *res);

/* rma.c: operations through the ring when it can take them, else by ioctl */
int rmawin__submit(struct rmawin_ep *ep, struct rmawin_op_desc *ops, unsigned int n,
		   struct rmawin_win *win);
int rmawin__queue_one(struct rmawin_win *win, struct rmawin_op_desc *op);
uint64_t rmawin__issue_begin(struct rmawin_ep *ep);
void rmawin__issue_end(struct rmawin_ep *ep, uint64_t ticket, struct rmawin_win *quiet);
int rmawin__win_quiet(const struct rmawin_win *win);
/*
 * A ticket whose call began while another was under way: the other's
 * operations may reach the kernel after ours, so the kernel's word that a
 * window is quiet after ours is not kept (rma.c).
 */
#define RMAWIN_TICKET_SHARED	(1ULL << 63)
/* the low bits of a ticket that a queued ring entry carries (ring.c) */
#define RMAWIN_UD_TICKET_MASK	0x3fffffffULL
uint64_t rmawin__ticket_lo(uint64_t ticket);
void rmawin__issue_quiet(struct rmawin_ep *ep, uint32_t win_id, uint64_t ticket_lo);
int rmawin__rma_desc(struct rmawin_win *win, uint8_t opcode, const void *origin, size_t len,
		     int target, size_t target_disp, struct rmawin_op_desc *op);
int rmawin__acc_desc(struct rmawin_win *win, uint8_t opcode, const void *origin,
		     const void *compare, void *result, size_t count, enum rmawin_type type,
		     int target, size_t target_disp, enum rmawin_op op, struct rmawin_op_desc *d);

/* window.c: the first queued error of @win, cleared, else @ret */
int rmawin__win_result(struct rmawin_win *win, int ret);
struct rmawin_win *rmawin__win_by_id(struct rmawin_ep *ep, uint32_t id);
void rmawin__win_error(struct rmawin_ep *ep, uint32_t id, int err);
void rmawin__wins_error(struct rmawin_ep *ep, int err);

/* epoch.c: the library's view of a window's epochs, and the checks it allows */
int rmawin__epoch_init(struct rmawin_win *win);
void rmawin__epoch_free(struct rmawin_win *win);
int rmawin__op_check(const struct rmawin_win *win, const struct rmawin_op_desc *op);
int rmawin__op_check_locked(const struct rmawin_win *win, const struct rmawin_op_desc *op);
void rmawin__epoch_note_lock(struct rmawin_win *win, uint32_t target);
int rmawin__flush_allowed(const struct rmawin_win *win, uint32_t target);
void rmawin__epoch_fence(struct rmawin_win *win, unsigned int flags, int ret);
void rmawin__epoch_lock(struct rmawin_win *win, uint32_t target, int ret);
void rmawin__epoch_unlock(struct rmawin_win *win, uint32_t target, int ret);
void rmawin__epoch_start(struct rmawin_win *win, const uint32_t *targets, int n, int ret);
void rmawin__epoch_complete(struct rmawin_win *win, int ret);
int rmawin__acc_on_device(const struct rmawin_win *win, unsigned int datatype);

/* lazy.c: locks noted at rmawin_lock(), taken late or never */
int rmawin__lazy_settle(struct rmawin_win *win);
int rmawin__passive_ioctl(struct rmawin_win *win, unsigned long req, uint32_t target,
			  uint32_t type, uint32_t flags);
int rmawin__lazy_settle_all(struct rmawin_ep *ep);
int rmawin__lazy_lock(struct rmawin_win *win, uint32_t type, uint32_t target);
int rmawin__lazy_lock_all(struct rmawin_win *win);
int rmawin__lazy_op(struct rmawin_win *win, const struct rmawin_op_desc *op);
int rmawin__lazy_unlock(struct rmawin_win *win, uint32_t target, int *res);
void rmawin__carry_arm(struct rmawin_win *win, uint32_t target);
int rmawin__carry_complete(struct rmawin_win *win, int *res);

/* endpoint.c: rmawin_ep_open(), the current version */
int rmawin__ep_open(const struct rmawin_ep_attr *attr, struct rmawin_ep **epp);

/* env.c */
int rmawin__env_key(uint8_t *key, size_t size);
int rmawin__parse_int(const char *s, int *val);
int rmawin__parse_addr(const char *s, struct sockaddr_storage *ss);
int rmawin__split_list(const char *list, char ***items);

#endif /* RMAWIN_PRIV_H */
