/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * librmawin: MPI-style one-sided communication (remote memory access) over
 * RDMA, through the rmawin kernel module.
 *
 * Conventions: every function returns 0 (or a non-negative count) on success
 * and a negative errno on failure, like liburing.  None prints, exits or
 * aborts, and none relies on errno.  rmawin_strerror() turns an error into
 * text.
 */
#ifndef RMAWIN_H
#define RMAWIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMAWIN_VERSION_MAJOR	0
#define RMAWIN_VERSION_MINOR	5

struct rmawin_ep;			/* an endpoint: one open /dev/rmawin joined to a group */
struct rmawin_win;			/* a window */

/* Flags for rmawin_ep_attr.flags */
#define RMAWIN_EP_NO_RING	0x1U	/* never use the mmap'd ring: every call is an ioctl */

/**
 * struct rmawin_ep_attr - how to open an endpoint
 * @rank: this process's rank, 0 .. @nranks-1
 * @nranks: number of processes in the group, at least 1
 * @addrs: @nranks listen addresses "ip:port" (IPv6 as "[addr]:port"), indexed
 *	by rank; may be NULL only when @nranks is 1.  The strings are copied.
 * @ibdev: RDMA device name, or NULL: the environment's RMAWIN_IBDEV, else the
 *	device that routes to @addrs[@rank]
 * @timeout_ms: group setup timeout, 0 = library default
 * @flags: RMAWIN_EP_* flags; unknown bits are -EINVAL
 * @job_key: the job's secret, the same bytes in every rank: members prove
 *	to each other that they hold it (it never crosses the wire); NULL
 *	only for a group of one
 * @job_key_len: its length, 16 to 64 bytes; 0 with a NULL @job_key
 *
 * Added after version 0.1: @job_key and @job_key_len.  A program built
 * against 0.1's header passes a smaller struct and cannot open a group of
 * more than one; rebuild it, or use rmawin_ep_open_env().
 */
struct rmawin_ep_attr {
	int rank;
	int nranks;
	const char *const *addrs;
	const char *ibdev;
	unsigned int timeout_ms;
	unsigned int flags;
	const uint8_t *job_key;
	size_t job_key_len;
};

/* ------------------------------------------------------------------------
 * Module and devices
 */

/**
 * struct rmawin_info - what the running kernel module reports
 * @abi_version: RMAWIN_ABI_VERSION of the module
 * @features: RMAWIN_FEAT_* bits of the module (uapi/linux/rmawin.h)
 * @ndevs: number of RDMA device ports the module knows
 */
struct rmawin_info {
	unsigned int abi_version;
	uint64_t features;
	int ndevs;
};

/**
 * struct rmawin_device - one port of one RDMA device
 * @name: device name, e.g. "rxe0", NUL-terminated
 * @netdev: network interface under the port, "" if none, NUL-terminated
 * @node_guid: node GUID, host byte order
 * @port: port number, from 1
 * @state: port state, enum rmawin_port_state values (4 = active)
 * @active_mtu: active MTU in bytes
 * @link_layer: 1 = InfiniBand, 2 = Ethernet (RoCE), 0 = unknown
 * @max_qp_wr: largest number of work requests on one queue pair
 * @max_sge: largest scatter/gather list of one work request
 * @max_fast_reg_page_list_len: pages one fast-registration MR can map
 * @atomic_cap: 0 no atomics, 1 atomic within the device, 2 globally atomic
 */
struct rmawin_device {
	char name[64];
	char netdev[16];
	uint64_t node_guid;
	int port;
	int state;
	unsigned int active_mtu;
	unsigned int link_layer;
	unsigned int max_qp_wr;
	unsigned int max_sge;
	unsigned int max_fast_reg_page_list_len;
	unsigned int atomic_cap;
};

/**
 * rmawin_query() - ask the kernel module about itself and its RDMA devices
 * @info: filled with ABI version, features and device count; may be NULL
 * @devs: array of @max_devs entries to fill, or NULL when @max_devs is 0
 * @max_devs: number of entries at @devs
 *
 * Opens the device node (/dev/rmawin, or the path in the environment
 * variable RMAWIN_DEV), queries it and closes it again; needs no endpoint.
 *
 * Return: the number of device ports the module knows, which may exceed
 * @max_devs (the first min(return, @max_devs) entries of @devs are filled);
 * -ENOENT if the node does not exist (module not loaded), -EINVAL for bad
 * arguments, other -errno from open() or the ioctl.
 */
int rmawin_query(struct rmawin_info *info, struct rmawin_device *devs, int max_devs);

/* ------------------------------------------------------------------------
 * Endpoints and groups
 */

/**
 * rmawin_ep_open() - open an endpoint and join the group (collective)
 * @attr: rank, group size, addresses, device, timeout and flags
 * @ep: on success, the new endpoint
 *
 * Opens /dev/rmawin (or $RMAWIN_DEV), binds the endpoint to the RDMA device
 * (@attr->ibdev, else $RMAWIN_IBDEV, else the device that owns
 * @addrs[@rank]) and connects it to every other rank: the kernel listens on
 * @addrs[@rank] and connects one RC queue pair to each peer.  Every rank
 * must call it with the same @nranks, @addrs and job key; it returns when
 * every peer is connected and has proven that it holds the key, or fails
 * after @timeout_ms (default 30 s).  A group of one needs no address if it
 * names its device, and no key.
 *
 * Return: 0; -EINVAL for bad arguments or an unparseable address, or a
 * singleton with neither address nor device; -ENOENT if /dev/rmawin does
 * not exist (module not loaded); -ENAMETOOLONG for a device name over 63
 * characters; -ENODEV if no such device; -ENETDOWN if none of its ports is
 * active; -EADDRNOTAVAIL if no RDMA device owns @addrs[@rank] (or not the
 * named one); -EADDRINUSE if the address is taken; -ENOKEY for a group of
 * more than one without @attr->job_key; -ETIMEDOUT if not every peer
 * connected in time; -EKEYREJECTED if, by then, a peer had failed to prove
 * it holds the key (a wrong proof, or none before the proof timeout: another
 * job, an intruder, or a handshake the network cut short); -ECONNREFUSED
 * if a peer refused (another group on the same addresses).
 */
int rmawin_ep_open(const struct rmawin_ep_attr *attr, struct rmawin_ep **ep);

/**
 * rmawin_ep_open_env() - rmawin_ep_open() configured from the environment
 * @ep: on success, the new endpoint
 *
 * Rank and group size come from the first of these pairs that is set:
 * RMAWIN_RANK/RMAWIN_NRANKS, PMI_RANK/PMI_SIZE,
 * OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS; if
 * none is, the process is a group of one (rank 0 of 1), as an MPI singleton.
 * RMAWIN_ADDRS holds the comma-separated addresses, one per rank;
 * RMAWIN_IBDEV names the device; RMAWIN_NO_RING=1 sets RMAWIN_EP_NO_RING.
 * The job key comes from RMAWIN_JOB_KEY (hex, 32 to 128 digits), else from
 * the file named by RMAWIN_JOB_KEY_FILE (the same hex, in a regular file
 * of the caller's that nobody else may read or write).
 *
 * Return: as rmawin_ep_open(); -EINVAL also for a malformed variable or
 * key, a pair with only one half set, or an address count other than the
 * group size; -EACCES for a key file others may read or that is not ours.
 */
int rmawin_ep_open_env(struct rmawin_ep **ep);

/**
 * rmawin_ep_close() - release an endpoint and everything it owns
 * @ep: the endpoint; invalid after the call
 *
 * Windows still open on @ep are released by the kernel with it.
 *
 * Return: 0, or -EINVAL for NULL.
 */
int rmawin_ep_close(struct rmawin_ep *ep);

/**
 * rmawin_rank() - this process's rank in the endpoint's group
 * @ep: the endpoint
 *
 * Return: the rank, or -EINVAL for NULL.
 */
int rmawin_rank(const struct rmawin_ep *ep);

/**
 * rmawin_nranks() - number of processes in the endpoint's group
 * @ep: the endpoint
 *
 * Return: the group size, or -EINVAL for NULL.
 */
int rmawin_nranks(const struct rmawin_ep *ep);

/**
 * rmawin_ep_ring_active() - does the endpoint use the zero-syscall ring?
 * @ep: the endpoint
 *
 * With a ring, put and get of up to RMAWIN_RING_COPY_MAX bytes, the
 * accumulate family and the flushes go through memory shared with the
 * kernel's poller thread, with no system call while the poller is awake;
 * everything else is an ioctl.  RMAWIN_EP_NO_RING, RMAWIN_NO_RING=1 in the
 * environment, or a kernel without RMAWIN_FEAT_RING mean no ring.
 *
 * Return: 1 if it does, 0 if not, -EINVAL for NULL.
 */
int rmawin_ep_ring_active(const struct rmawin_ep *ep);

/**
 * rmawin_barrier() - wait until every rank of the group has called it
 * @ep: the endpoint
 *
 * A dissemination barrier in the kernel: ceil(log2(nranks)) rounds of one
 * message.
 *
 * Return: 0; -EINVAL for NULL; -ECONNRESET if a peer left the group;
 * -ENODEV if the device went away.
 */
int rmawin_barrier(struct rmawin_ep *ep);

/**
 * rmawin_strerror() - describe an error returned by librmawin
 * @err: the error, as returned (negative) or as an errno (positive)
 *
 * Thread-safe.  The text is specific to what the error means for this
 * library where that differs from the C library's wording.
 *
 * Return: a message; never NULL.  It may live in a per-thread buffer that the
 * thread's next rmawin_strerror() call overwrites.
 */
const char *rmawin_strerror(int err);

/* ------------------------------------------------------------------------
 * Windows (collective)
 */

/*
 * Window flag: concurrent accumulate-family operations on any one location
 * of the window use the same op or RMAWIN_NO_OP (MPI's accumulate_ops
 * info key, same_op or same_op_no_op).  8-byte integer operations
 * (RMAWIN_INT64, RMAWIN_UINT64) then use the device's atomics: SUM, NO_OP
 * and compare_and_swap in one round trip, the other ops as a
 * compare-and-swap loop; their target offset must be a multiple of 8
 * (else -EINVAL).  Other types go to the target's kernel, as on any
 * window.  The same value as the kernel's uAPI flag.
 */
#define RMAWIN_WIN_SAME_OP	0x2U
/*
 * Window flag, with RMAWIN_WIN_SAME_OP only (else -EINVAL): integers of 1,
 * 2 and 4 bytes take the device's atomics too, as compare-and-swap loops
 * on the aligned 8-byte words they lie in; their target offset must be a
 * multiple of their size (else -EINVAL).  One device atomic per 8 bytes:
 * good for counters and flags, slow for arrays, which the target's kernel
 * takes 448 bytes a message (8 KiB a write into its inbox from 2 KiB on).
 * The same on every rank.
 */
#define RMAWIN_WIN_NIC_SMALL_INTS	0x4U

/**
 * rmawin_win_create() - expose existing memory to the group (collective)
 * @ep: the endpoint
 * @base: start of the memory
 * @size: its length in bytes
 * @disp_unit: unit of target displacements into this window, in bytes
 * @flags: 0, RMAWIN_WIN_SAME_OP, or both it and RMAWIN_WIN_NIC_SMALL_INTS
 *	(the same on every rank)
 * @win: on success, the new window
 *
 * The kernel pins and registers the memory and exchanges its keys with
 * every rank; the call returns once it knows every rank's window.  @size 0
 * is legal (the rank exposes nothing).  Every rank must create its windows
 * in the same order.
 *
 * Return: 0; -EINVAL (NULL, flags, RMAWIN_WIN_NIC_SMALL_INTS without
 * RMAWIN_WIN_SAME_OP, @disp_unit 0, @base or @size not a multiple of 8
 * with RMAWIN_WIN_SAME_OP); -EFAULT for memory that is not mapped writable; -ENOMEM (or -EPERM) beyond RLIMIT_MEMLOCK;
 * -EREMOTEIO if another rank failed to create its part; -ECONNRESET,
 * -ENODEV.
 */
int rmawin_win_create(struct rmawin_ep *ep, void *base, size_t size, unsigned int disp_unit,
		      unsigned int flags, struct rmawin_win **win);

/**
 * rmawin_win_allocate() - expose kernel-allocated memory (collective)
 * @ep: the endpoint
 * @size: length in bytes
 * @disp_unit: unit of target displacements into this window, in bytes
 * @flags: 0, RMAWIN_WIN_SAME_OP, or both it and RMAWIN_WIN_NIC_SMALL_INTS
 *	(the same on every rank)
 * @base: on success, where the memory is mapped in this process
 * @win: on success, the new window
 *
 * The kernel allocates zeroed pages, charged to RLIMIT_MEMLOCK like a
 * created window's, and the library maps them (MAP_SHARED on the
 * endpoint's file) at the address written to @base; rmawin_win_free()
 * unmaps them.
 *
 * Return: as rmawin_win_create().
 */
int rmawin_win_allocate(struct rmawin_ep *ep, size_t size, unsigned int disp_unit,
			unsigned int flags, void **base, struct rmawin_win **win);

/**
 * rmawin_win_free() - release a window (collective)
 * @win: the window; invalid after the call, unless it returned -EBUSY
 *
 * Completes this rank's outstanding operations, waits for every rank to
 * free the window, then releases every pinned page.
 *
 * Return: 0; -EINVAL for NULL; -EBUSY, with nothing done and @win still
 * valid, while another thread waits on the window (rmawin_lock(),
 * rmawin_start(), rmawin_wait()); an outstanding operation's error; the
 * barrier's error (the window is released anyway).
 */
int rmawin_win_free(struct rmawin_win *win);

/**
 * rmawin_win_set_lazy_lock() - let rmawin_lock() on @win return before the lock is held
 * @win: the window
 * @on: 1: lazy; 0: the default, rmawin_lock() returns holding the lock
 *
 * MPI lets a lock be taken as late as its first use.  With @on, a
 * rmawin_lock() of one other rank, on a window with no lock held and no
 * active-target epoch open, only notes the lock: the first operation of the
 * epoch is checked as usual (its argument errors still come at once) and
 * kept.  A rmawin_unlock() that finds one put, get or accumulate-family
 * operation of at most RMAWIN_EPOCH_OP_MAX bytes kept sends it with the
 * lock and the unlock in one message (RMAWIN_OP_F_EPOCH_*): one round trip
 * for the epoch.  If the target's lock is not free at once, or anything
 * else comes first (a second operation, a flush, another synchronization
 * of the window), the lock is taken the usual way then, and the kept
 * operation issued under it; the lock's own errors then come from that
 * call.  An unlock with nothing kept sends nothing.
 *
 * Return: 0; -EINVAL (NULL, @on not 0 or 1); -EOPNOTSUPP if the kernel
 * lacks RMAWIN_FEAT_EPOCH_OP.
 */
int rmawin_win_set_lazy_lock(struct rmawin_win *win, int on);

/* ------------------------------------------------------------------------
 * Communication: nonblocking, complete at the next synchronization.
 * target_disp is in units of the target window's disp_unit, as in MPI.
 */

/**
 * rmawin_put() - write @len bytes from @origin into @target's window
 * @win: the window
 * @origin: local source buffer
 * @len: bytes to write
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 *
 * @origin must not change until the put completes locally
 * (rmawin_flush_local() or any call that completes it).  On the ring a put
 * of up to 8 KiB is only queued: its argument errors come back at once,
 * the transfer's own (-EFAULT, -ECONNRESET, -ENODEV) from the call that
 * completes it (flush, unlock, fence, complete, window free).
 *
 * Return: 0; -EINVAL for NULL, a bad rank; -EPERM outside an access epoch
 * to @target; -ERANGE if the target range is beyond the target's window
 * (nothing is sent); -EFAULT for unmapped @origin; -ECONNRESET if the
 * target left; -ENODEV.
 */
int rmawin_put(struct rmawin_win *win, const void *origin, size_t len, int target,
	       size_t target_disp);

/**
 * rmawin_get() - read @len bytes from @target's window into @origin
 * @win: the window
 * @origin: local destination buffer
 * @len: bytes to read
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 *
 * @origin holds the data after the call that completes the get, not
 * before.  Queued on the ring as rmawin_put() is.
 *
 * Return: as rmawin_put(); -EFAULT also for read-only @origin.
 */
int rmawin_get(struct rmawin_win *win, void *origin, size_t len, int target,
	       size_t target_disp);

enum rmawin_op { RMAWIN_SUM, RMAWIN_PROD, RMAWIN_MIN, RMAWIN_MAX, RMAWIN_BAND, RMAWIN_BOR,
		 RMAWIN_BXOR, RMAWIN_LAND, RMAWIN_LOR, RMAWIN_LXOR, RMAWIN_REPLACE, RMAWIN_NO_OP };
enum rmawin_type { RMAWIN_INT8, RMAWIN_UINT8, RMAWIN_INT16, RMAWIN_UINT16, RMAWIN_INT32,
		   RMAWIN_UINT32, RMAWIN_INT64, RMAWIN_UINT64, RMAWIN_FLOAT, RMAWIN_DOUBLE };

/**
 * rmawin_accumulate() - combine @count elements into @target's window
 * @win: the window
 * @origin: local operand, @count elements of @type
 * @count: number of elements
 * @type: element type
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 * @op: target = target @op origin, atomically per element
 *
 * target = target @op origin, element by element, applied by the target's
 * kernel: atomic per element against every accumulate-family operation.
 * On the ring the accumulate family is queued as rmawin_put() is: argument
 * errors at once, -EFAULT and the transfer's errors from the call that
 * completes it.
 *
 * Return: 0; -EINVAL for an op/type pair MPI does not define (BAND on
 * double...), a bad rank; -EPERM outside an access epoch to @target;
 * -ERANGE beyond the target window; -EFAULT.
 */
int rmawin_accumulate(struct rmawin_win *win, const void *origin, size_t count,
		      enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op);

/**
 * rmawin_get_accumulate() - accumulate, returning the previous target data
 * @win: the window
 * @origin: local operand, @count elements of @type (unused for RMAWIN_NO_OP)
 * @result: receives the target's data from before the operation
 * @count: number of elements
 * @type: element type
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 * @op: the operation
 *
 * As rmawin_accumulate(); @result receives the previous values at the next
 * synchronization.
 *
 * Return: as rmawin_accumulate().
 */
int rmawin_get_accumulate(struct rmawin_win *win, const void *origin, void *result,
			  size_t count, enum rmawin_type type, int target, size_t target_disp,
			  enum rmawin_op op);

/**
 * rmawin_fetch_and_op() - get_accumulate of a single element
 * @win: the window
 * @origin: local operand, one element of @type
 * @result: receives the target's previous value
 * @type: element type
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 * @op: the operation
 *
 * rmawin_get_accumulate() of one element.
 *
 * Return: as rmawin_accumulate().
 */
int rmawin_fetch_and_op(struct rmawin_win *win, const void *origin, void *result,
			enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op);

/**
 * rmawin_compare_and_swap() - atomically replace one element if it equals @compare
 * @win: the window
 * @origin: the new value, one element of @type
 * @compare: the value expected at the target
 * @result: receives the target's previous value
 * @type: element type (an integer type)
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 *
 * If the target element equals the one at @compare it becomes the one at
 * @origin; @result receives the previous value (compared bitwise, floats included).
 *
 * Return: as rmawin_accumulate().
 */
int rmawin_compare_and_swap(struct rmawin_win *win, const void *origin, const void *compare,
			    void *result, enum rmawin_type type, int target, size_t target_disp);

/* ------------------------------------------------------------------------
 * Batches: several operations issued with one call
 */

/*
 * struct rmawin_batch: operations prepared to be issued together (opaque).
 * A batch belongs to one endpoint and holds operations on any of its
 * windows.  rmawin_batch_submit() issues them in the order they were
 * added: through the ring in one pass with at most one doorbell, or as
 * RMAWIN_IOC_RMA system calls of up to 1024 operations each.  Each
 * operation means what the single call of the same name means, and
 * completes at the same synchronization.  A batch is not thread-safe: one
 * thread fills and submits it at a time.
 */
struct rmawin_batch;

/**
 * rmawin_batch_create() - a batch of up to @max_ops operations
 * @ep: the endpoint whose windows the operations will target
 * @max_ops: room, 1 to 65536
 * @batch: out: the batch, empty
 *
 * Return: 0; -EINVAL (NULL, @max_ops out of range); -ENOMEM.
 */
int rmawin_batch_create(struct rmawin_ep *ep, unsigned int max_ops, struct rmawin_batch **batch);

/**
 * rmawin_batch_free() - free a batch; what it holds is not issued
 * @batch: the batch, or NULL
 */
void rmawin_batch_free(struct rmawin_batch *batch);

/**
 * rmawin_batch_count() - operations prepared and not yet submitted
 * @batch: the batch
 *
 * Return: the count; 0 for NULL.
 */
unsigned int rmawin_batch_count(const struct rmawin_batch *batch);

/**
 * rmawin_batch_put() - add a rmawin_put() to a batch
 * @batch: the batch
 * @win: the window, of the batch's endpoint
 * @origin: local source buffer; it must not change until the put completes
 * @len: bytes to write
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 *
 * Return: 0; -EINVAL for NULL, a window of another endpoint, a negative
 * rank; -ENOSPC if the batch is full.  What depends on the target (its
 * window's size, the epoch) is checked when the batch is submitted.
 */
int rmawin_batch_put(struct rmawin_batch *batch, struct rmawin_win *win, const void *origin,
		     size_t len, int target, size_t target_disp);

/**
 * rmawin_batch_get() - add a rmawin_get() to a batch
 * @batch: the batch
 * @win: the window, of the batch's endpoint
 * @origin: local destination buffer
 * @len: bytes to read
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 *
 * Return: as rmawin_batch_put().
 */
int rmawin_batch_get(struct rmawin_batch *batch, struct rmawin_win *win, void *origin,
		     size_t len, int target, size_t target_disp);

/**
 * rmawin_batch_accumulate() - add a rmawin_accumulate() to a batch
 * @batch: the batch
 * @win: the window, of the batch's endpoint
 * @origin: @count elements of @type
 * @count: number of elements
 * @type: element type
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 * @op: the operation
 *
 * Return: as rmawin_batch_put(); -EINVAL also for an unknown @type.
 */
int rmawin_batch_accumulate(struct rmawin_batch *batch, struct rmawin_win *win,
			    const void *origin, size_t count, enum rmawin_type type, int target,
			    size_t target_disp, enum rmawin_op op);

/**
 * rmawin_batch_get_accumulate() - add a rmawin_get_accumulate() to a batch
 * @batch: the batch
 * @win: the window, of the batch's endpoint
 * @origin: @count elements of @type (unused for RMAWIN_NO_OP)
 * @result: receives the @count previous elements
 * @count: number of elements
 * @type: element type
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 * @op: the operation
 *
 * Return: as rmawin_batch_accumulate().
 */
int rmawin_batch_get_accumulate(struct rmawin_batch *batch, struct rmawin_win *win,
				const void *origin, void *result, size_t count,
				enum rmawin_type type, int target, size_t target_disp,
				enum rmawin_op op);

/**
 * rmawin_batch_fetch_and_op() - add a rmawin_fetch_and_op() to a batch
 * @batch: the batch
 * @win: the window, of the batch's endpoint
 * @origin: one element of @type
 * @result: receives the previous element
 * @type: element type
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 * @op: the operation
 *
 * Return: as rmawin_batch_accumulate().
 */
int rmawin_batch_fetch_and_op(struct rmawin_batch *batch, struct rmawin_win *win,
			      const void *origin, void *result, enum rmawin_type type, int target,
			      size_t target_disp, enum rmawin_op op);

/**
 * rmawin_batch_compare_and_swap() - add a rmawin_compare_and_swap() to a batch
 * @batch: the batch
 * @win: the window, of the batch's endpoint
 * @origin: the new value, one element of @type
 * @compare: the value expected at the target
 * @result: receives the target's previous value
 * @type: element type (an integer type)
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 *
 * Return: as rmawin_batch_accumulate().
 */
int rmawin_batch_compare_and_swap(struct rmawin_batch *batch, struct rmawin_win *win,
				  const void *origin, const void *compare, void *result,
				  enum rmawin_type type, int target, size_t target_disp);

/**
 * rmawin_batch_submit() - issue every operation of a batch, in order
 * @batch: the batch; it is empty afterwards, whatever the result
 *
 * Each operation is checked as its single call would be.  Through the
 * ring, every operation is issued and the first error among them is
 * returned; as ioctls, up to 1024 operations are checked together before
 * any of them is issued, and after a group that failed the rest are not
 * issued.  Either way a failed operation is not issued, and those issued
 * complete at the window's next synchronization.  An empty batch is a no-op.
 *
 * Return: 0; -EINVAL for NULL; else the first error, as the single calls
 * return them.
 */
int rmawin_batch_submit(struct rmawin_batch *batch);

/* ------------------------------------------------------------------------
 * Active target synchronization
 */

/*
 * Assertions for rmawin_fence(), with the meaning of MPI's MPI_MODE_*.  The
 * library passes them to the kernel as they are, so they are also defined,
 * token for token, in <linux/rmawin.h> for programs that use the ioctls;
 * lib/rmawin_priv.h includes both headers, so a value changed in one alone
 * is a redefinition error when the library is built.
 */
#define RMAWIN_MODE_NOCHECK	0x01U	/* (post/start) matching calls already made */
#define RMAWIN_MODE_NOSTORE	0x02U	/* no local stores to the window since the last sync */
#define RMAWIN_MODE_NOPUT	0x04U	/* no puts/accumulates to this window until the next sync */
#define RMAWIN_MODE_NOPRECEDE	0x08U	/* this fence completes no operations of this process */
#define RMAWIN_MODE_NOSUCCEED	0x10U	/* no operations of this process follow this fence */

/**
 * rmawin_fence() - close the current access/exposure epoch (collective)
 * @win: the window
 * @assert_flags: RMAWIN_MODE_* assertions, or 0
 *
 * Every put and get issued on @win by any rank before the fence is
 * complete, at origin and target, when it returns on any rank.  The
 * assertions are accepted as hints.
 *
 * Return: 0; -EINVAL (NULL, unknown assertion bits); the first error of an
 * operation of the epoch; -ECONNRESET if a rank left; -ENODEV.
 */
int rmawin_fence(struct rmawin_win *win, unsigned int assert_flags);

/**
 * rmawin_post() - start an exposure epoch for the ranks in @origins
 * @win: the window
 * @origins: ranks that may access this window
 * @n: number of ranks in @origins
 *
 * Opens an exposure epoch: each rank of @origins may access this window
 * after its matching rmawin_start(), until its rmawin_complete().
 *
 * Return: 0; -EINVAL (NULL, bad or repeated rank); -EBUSY (already posted).
 */
int rmawin_post(struct rmawin_win *win, const int *origins, int n);

/**
 * rmawin_start() - start an access epoch to the ranks in @targets
 * @win: the window
 * @targets: ranks this process will access
 * @n: number of ranks in @targets
 *
 * Waits until every rank of @targets has posted to this rank; then
 * operations to them are allowed until rmawin_complete().
 *
 * Return: 0; -EINVAL; -EBUSY (already started, locks held, or a fence
 * epoch with operations); -ECONNRESET if a target left.
 */
int rmawin_start(struct rmawin_win *win, const int *targets, int n);

/**
 * rmawin_complete() - end the access epoch begun by rmawin_start()
 * @win: the window
 *
 * Completes the access epoch's operations at the targets, then tells them.
 *
 * Return: 0; -EPERM without rmawin_start(); an operation's error.
 */
int rmawin_complete(struct rmawin_win *win);

/**
 * rmawin_wait() - end the exposure epoch begun by rmawin_post()
 * @win: the window
 *
 * Waits until every origin of the exposure epoch has completed.
 *
 * Return: 0; -EPERM without rmawin_post(); -ECONNRESET if an origin left.
 */
int rmawin_wait(struct rmawin_win *win);

/**
 * rmawin_test() - nonblocking rmawin_wait()
 * @win: the window
 *
 * Return: 1 if the exposure epoch is over (it is then closed), 0 if not
 * yet; otherwise as rmawin_wait().
 */
int rmawin_test(struct rmawin_win *win);

/* ------------------------------------------------------------------------
 * Passive target synchronization
 */

enum rmawin_lock_type { RMAWIN_LOCK_SHARED, RMAWIN_LOCK_EXCLUSIVE };

/**
 * rmawin_lock() - begin a passive-target access epoch to @target
 * @win: the window
 * @type: shared or exclusive
 * @target: rank of the target
 *
 * Return: 0; -EINVAL (NULL, bad rank); -EBUSY (already locked, or a fence
 * epoch with operations open); -ENOLCK (not locked); -ECONNRESET; -ENODEV.
 */
int rmawin_lock(struct rmawin_win *win, enum rmawin_lock_type type, int target);

/**
 * rmawin_unlock() - complete all operations to @target and end its epoch
 * @win: the window
 * @target: rank of the target
 *
 * Return: 0; -EINVAL (NULL, bad rank); -EBUSY (already locked, or a fence
 * epoch with operations open); -ENOLCK (not locked); -ECONNRESET; -ENODEV.
 */
int rmawin_unlock(struct rmawin_win *win, int target);

/**
 * rmawin_lock_all() - shared lock on every rank's window
 * @win: the window
 *
 * Return: 0; -EINVAL (NULL, bad rank); -EBUSY (already locked, or a fence
 * epoch with operations open); -ENOLCK (not locked); -ECONNRESET; -ENODEV.
 */
int rmawin_lock_all(struct rmawin_win *win);

/**
 * rmawin_unlock_all() - end the epoch begun by rmawin_lock_all()
 * @win: the window
 *
 * Return: 0; -EINVAL (NULL, bad rank); -EBUSY (already locked, or a fence
 * epoch with operations open); -ENOLCK (not locked); -ECONNRESET; -ENODEV.
 */
int rmawin_unlock_all(struct rmawin_win *win);

/**
 * rmawin_flush() - complete all operations to @target, at origin and target
 * @win: the window
 * @target: rank of the target
 *
 * Return: 0; -EINVAL (NULL, bad rank); -EBUSY (another thread's
 * rmawin_lock() of @target still waits for its grant); -ENOLCK (not
 * locked); -ECONNRESET; -ENODEV.
 */
int rmawin_flush(struct rmawin_win *win, int target);

/**
 * rmawin_flush_all() - rmawin_flush() to every target
 * @win: the window
 *
 * Return: 0; -EINVAL (NULL); -EBUSY (another thread's rmawin_lock() still
 * waits for a grant); -ENOLCK (no lock held); -ECONNRESET; -ENODEV.
 */
int rmawin_flush_all(struct rmawin_win *win);

/**
 * rmawin_flush_local() - complete operations to @target at the origin only
 * @win: the window
 * @target: rank of the target
 *
 * Origin buffers may be reused afterwards.
 *
 * Return: 0; -EINVAL (NULL, bad rank); -EBUSY (already locked, or a fence
 * epoch with operations open); -ENOLCK (not locked); -ECONNRESET; -ENODEV.
 */
int rmawin_flush_local(struct rmawin_win *win, int target);

/**
 * rmawin_flush_local_all() - rmawin_flush_local() to every target
 * @win: the window
 *
 * Return: 0; -EINVAL (NULL, bad rank); -EBUSY (already locked, or a fence
 * epoch with operations open); -ENOLCK (not locked); -ECONNRESET; -ENODEV.
 */
int rmawin_flush_local_all(struct rmawin_win *win);

/**
 * rmawin_sync() - synchronize the public and private copies of the window
 * @win: the window
 *
 * A full memory barrier: the window is the process's own memory, which the
 * device writes directly.
 *
 * Return: 0, or -EINVAL for NULL.
 */
int rmawin_sync(struct rmawin_win *win);

/* ------------------------------------------------------------------------
 * Notified put: the target learns that the data has landed.
 */

/**
 * struct rmawin_notification - one notified put, as the target sees it
 * @source: rank that issued the put
 * @tag: the tag it gave
 * @target_disp: where the data landed, in disp_units of the window
 * @len: how many bytes
 */
struct rmawin_notification { int source; uint32_t tag; size_t target_disp; size_t len; };

/**
 * rmawin_put_notify() - rmawin_put() that also notifies @target
 * @win: the window
 * @origin: local source buffer
 * @len: bytes to write
 * @target: rank of the target
 * @target_disp: where in the target window, in disp_units
 * @tag: value passed to the target with the notification
 *
 * The put, then a notification (this rank, @tag, @target_disp, @len) that
 * the target's kernel queues once the data is visible in its window.  Needs
 * an access epoch like rmawin_put().
 *
 * Return: as rmawin_put().
 */
int rmawin_put_notify(struct rmawin_win *win, const void *origin, size_t len, int target,
		      size_t target_disp, uint32_t tag);

/**
 * rmawin_notify_wait() - wait for the next notification on this window
 * @win: the window
 * @n: receives the notification
 * @timeout_ms: how long to wait; 0 polls, -1 waits forever
 *
 * Takes the oldest notification of @win from the endpoint's queue (one per
 * endpoint, whatever the number of peers).  rmawin_ep_fd() is readable
 * (poll, epoll) while the queue is not empty.  No synchronization call is
 * needed: the data is in the window when the notification is.
 *
 * The queue holds at most 4096 notifications from each rank; a sender that
 * outruns its reader further has its notifications dropped (the data still
 * lands).  The reader is told, never left to guess: the next call returns
 * -EOVERFLOW once, and the notifications still queued come with the calls
 * after it.
 *
 * Return: 0; -EINVAL; -EOVERFLOW if notifications were dropped since the
 * last call that said so; -ETIMEDOUT, or -EAGAIN for @timeout_ms 0, if none
 * came; -EINTR on a signal; -ENOTCONN if the endpoint's group was torn
 * down meanwhile (an rmawin_win_free() that found a peer dead does that),
 * -ENODEV if the device went.
 */
int rmawin_notify_wait(struct rmawin_win *win, struct rmawin_notification *n, int timeout_ms);

/**
 * rmawin_ep_fd() - the endpoint's file descriptor, for poll()/epoll
 * @ep: the endpoint
 *
 * The descriptor becomes readable when a notification arrives (once
 * notified put is implemented).  It belongs to @ep: do not close it.
 *
 * Return: the descriptor, or -EINVAL for NULL.
 */
int rmawin_ep_fd(const struct rmawin_ep *ep);

/**
 * rmawin_ep_ring_wakeups() - doorbells rung on the endpoint's ring
 * @ep: the endpoint
 *
 * The ring's only system calls: RMAWIN_IOC_RING_ENTER, made when the
 * poller had gone to sleep after its idle time.
 *
 * Return: how many so far (0 without a ring).
 */
unsigned long rmawin_ep_ring_wakeups(const struct rmawin_ep *ep);

#ifdef __cplusplus
}
#endif

#endif /* RMAWIN_H */
