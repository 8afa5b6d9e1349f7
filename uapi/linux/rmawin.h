/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rmawin: MPI-style one-sided communication (remote memory access) over
 * RDMA, mediated by the kernel.  This header is the whole ABI between the
 * rmawin module and userspace.
 *
 * Conventions (Documentation/process/botching-up-ioctls.rst):
 *  - every ioctl takes one struct that starts with __u32 size and __u32
 *    flags; userspace sets size to sizeof() of the struct it was built
 *    with.  A smaller size than the first ABI revision is -EINVAL; a larger
 *    one is accepted when the extra tail is zero and refused with -E2BIG
 *    otherwise (copy_struct_from_user());
 *  - only fixed-width types, pointers passed as __u64, structs padded to a
 *    multiple of 8 bytes, 64-bit fields __aligned_u64 so that 32-bit
 *    userspace lays them out as the kernel does;
 *  - a struct larger than 4096 bytes is -E2BIG;
 *  - only ioctls with results write their struct back, on success: an
 *    input-only struct may be read-only memory;
 *  - unknown flags and non-zero reserved fields are -EINVAL;
 *  - RMAWIN_IOC_QUERY reports the ABI version and feature bits.
 */
#ifndef _UAPI_LINUX_RMAWIN_H
#define _UAPI_LINUX_RMAWIN_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/const.h>

/*
 * 2: GROUP_JOIN takes the job's secret (key_ptr, key_len) instead of a
 * 64-bit group key; NOTIFY_WAIT reports lost notifications.
 */
#define RMAWIN_ABI_VERSION	2

/* Not InfiniBand's 0x1b; 0xD7 is free in ioctl-number.rst. */
#define RMAWIN_IOC_TYPE		0xD7

/**
 * enum rmawin_ioc_nr - ioctl numbers; the dispatch table is indexed by them
 * @RMAWIN_CMD_QUERY: struct rmawin_query
 * @RMAWIN_CMD_EP_BIND: struct rmawin_ep_bind
 * @RMAWIN_CMD_GROUP_JOIN: struct rmawin_group_join
 * @RMAWIN_CMD_BARRIER: struct rmawin_barrier
 * @RMAWIN_CMD_WIN_CREATE: struct rmawin_win_create
 * @RMAWIN_CMD_WIN_FREE: struct rmawin_win_free
 * @RMAWIN_CMD_RMA: struct rmawin_rma
 * @RMAWIN_CMD_FENCE: struct rmawin_fence
 * @RMAWIN_CMD_LOCK: struct rmawin_passive
 * @RMAWIN_CMD_UNLOCK: struct rmawin_passive
 * @RMAWIN_CMD_FLUSH: struct rmawin_passive
 * @RMAWIN_CMD_POST: struct rmawin_pscw
 * @RMAWIN_CMD_START: struct rmawin_pscw
 * @RMAWIN_CMD_COMPLETE: struct rmawin_pscw
 * @RMAWIN_CMD_WAIT: struct rmawin_pscw
 * @RMAWIN_CMD_NOTIFY_WAIT: struct rmawin_notify_wait
 * @RMAWIN_CMD_RING_SETUP: struct rmawin_ring_setup
 * @RMAWIN_CMD_RING_ENTER: struct rmawin_ring_enter
 * @RMAWIN_CMD_WIN_INFO: struct rmawin_win_info
 * @RMAWIN_CMD_LAST: first unused number
 */
enum rmawin_ioc_nr {
	RMAWIN_CMD_QUERY = 0x80,
	RMAWIN_CMD_EP_BIND,
	RMAWIN_CMD_GROUP_JOIN,
	RMAWIN_CMD_BARRIER,
	RMAWIN_CMD_WIN_CREATE,
	RMAWIN_CMD_WIN_FREE,
	RMAWIN_CMD_RMA,
	RMAWIN_CMD_FENCE,
	RMAWIN_CMD_LOCK,
	RMAWIN_CMD_UNLOCK,
	RMAWIN_CMD_FLUSH,
	RMAWIN_CMD_POST,
	RMAWIN_CMD_START,
	RMAWIN_CMD_COMPLETE,
	RMAWIN_CMD_WAIT,
	RMAWIN_CMD_NOTIFY_WAIT,
	RMAWIN_CMD_RING_SETUP,
	RMAWIN_CMD_RING_ENTER,
	RMAWIN_CMD_WIN_INFO,
	RMAWIN_CMD_LAST,
};

/* Largest RDMA device name, as IB_DEVICE_NAME_MAX in the kernel. */
#define RMAWIN_DEVNAME_MAX	64
/* Largest network interface name, as IFNAMSIZ. */
#define RMAWIN_IFNAME_MAX	16

/*
 * Feature bits reported in &rmawin_query.features.  A bit is set when the
 * running module implements the capability; later revisions add bits,
 * never change them.
 */
/* RMAWIN_IOC_EP_BIND binds an endpoint to an RDMA device */
#define RMAWIN_FEAT_EP_BIND	_BITULL(0)
/* RMAWIN_IOC_GROUP_JOIN and RMAWIN_IOC_BARRIER */
#define RMAWIN_FEAT_GROUP	_BITULL(1)
/* windows over user memory, put and get, fence */
#define RMAWIN_FEAT_WINDOWS	_BITULL(2)
/* accumulate, get_accumulate, fetch_and_op, compare_and_swap */
#define RMAWIN_FEAT_ACCUMULATE	_BITULL(3)
/* passive target: LOCK, UNLOCK, FLUSH */
#define RMAWIN_FEAT_PASSIVE	_BITULL(4)
/* generalized active target: POST, START, COMPLETE, WAIT */
#define RMAWIN_FEAT_PSCW	_BITULL(5)
/* notified put: RMAWIN_OP_PUT_NOTIFY, NOTIFY_WAIT, poll() on the endpoint */
#define RMAWIN_FEAT_NOTIFY	_BITULL(6)
/* mmap'd submission and completion rings, a kernel poller, RMAWIN_OP_FLUSH */
#define RMAWIN_FEAT_RING	_BITULL(7)
/* authenticated groups: GROUP_JOIN takes a job key, members prove they hold it */
#define RMAWIN_FEAT_AUTH	_BITULL(8)
/* RMAWIN_IOC_WIN_INFO: every rank's window size and displacement unit */
#define RMAWIN_FEAT_WIN_INFO	_BITULL(9)
/* RMAWIN_WIN_SAME_OP: 8-byte integer accumulates through the device's atomics */
#define RMAWIN_FEAT_NIC_ATOMICS	_BITULL(10)
/* waits for peers hold nothing the endpoint's other threads need (MPI_THREAD_MULTIPLE) */
#define RMAWIN_FEAT_THREADS	_BITULL(11)
/* RMAWIN_RMA_QUIET: RMAWIN_IOC_RMA says when a flush would have nothing to wait for */
#define RMAWIN_FEAT_RMA_QUIET	_BITULL(12)
/*
 * RMAWIN_WIN_SAME_OP: integer accumulates of every size (not only 8-byte
 * ones) through the device's atomics; a same_op window's length is then a
 * multiple of 8
 */
#define RMAWIN_FEAT_NIC_INT_ATOMICS	_BITULL(13)
/* RMAWIN_OP_F_EPOCH_*: one small operation as a whole passive-target epoch */
#define RMAWIN_FEAT_EPOCH_OP	_BITULL(14)
/*
 * RMAWIN_WIN_NIC_SMALL_INTS: a same_op window takes integers of 1, 2 and
 * 4 bytes to the device's atomics only with this flag; without it they go
 * to the target's kernel (kernels with RMAWIN_FEAT_NIC_INT_ATOMICS and
 * without this bit took them to the device on every same_op window)
 */
#define RMAWIN_FEAT_NIC_SMALL_FLAG	_BITULL(15)
/*
 * RMAWIN_LOCK_F_OTHERS, and an epoch operation (RMAWIN_OP_F_EPOCH_*) on a
 * window that holds locks of ranks other than its target (a lazy lock_all)
 */
#define RMAWIN_FEAT_LAZY_LOCK_ALL	_BITULL(16)
/* RMAWIN_CQE_F_QUIET: a ring completion says when a flush would have nothing to wait for */
#define RMAWIN_FEAT_RING_QUIET	_BITULL(17)
/* RMAWIN_OP_F_EPOCH_COMPLETE: a PSCW epoch's one operation travels in its COMPLETE */
#define RMAWIN_FEAT_COMPLETE_OP	_BITULL(18)

/**
 * enum rmawin_port_state - state of an RDMA port, as the kernel's ib_port_state
 * @RMAWIN_PORT_NOP: no state change
 * @RMAWIN_PORT_DOWN: link down
 * @RMAWIN_PORT_INIT: link up, not yet configured
 * @RMAWIN_PORT_ARMED: configured, not yet active
 * @RMAWIN_PORT_ACTIVE: ready for traffic
 * @RMAWIN_PORT_ACTIVE_DEFER: active, transitioning
 */
enum rmawin_port_state {
	RMAWIN_PORT_NOP,
	RMAWIN_PORT_DOWN,
	RMAWIN_PORT_INIT,
	RMAWIN_PORT_ARMED,
	RMAWIN_PORT_ACTIVE,
	RMAWIN_PORT_ACTIVE_DEFER,
};

/**
 * struct rmawin_dev_info - one port of one RDMA device, as QUERY reports it
 * @name: device name (e.g. "rxe0"), NUL-terminated
 * @netdev: network interface under the port ("" if none), NUL-terminated
 * @node_guid: the device's node GUID, in host byte order
 * @port: port number, from 1
 * @state: port state, enum rmawin_port_state
 * @active_mtu: active MTU in bytes (256..4096)
 * @link_layer: 1 = InfiniBand, 2 = Ethernet (RoCE), 0 = unknown
 * @max_qp_wr: largest number of work requests on one queue pair
 * @max_sge: largest scatter/gather list of one work request
 * @max_fast_reg_page_list_len: pages one fast-registration MR can map
 * @atomic_cap: 0 none, 1 atomics atomic within the device, 2 globally
 * @reserved: zero
 *
 * Userspace gives QUERY the size of the entry it knows in
 * &rmawin_query.dev_entry_size; the kernel writes that many bytes per
 * entry, zero-filling what it does not know.
 */
struct rmawin_dev_info {
	char name[RMAWIN_DEVNAME_MAX];
	char netdev[RMAWIN_IFNAME_MAX];
	__aligned_u64 node_guid;
	__u32 port;
	__u32 state;
	__u32 active_mtu;
	__u32 link_layer;
	__u32 max_qp_wr;
	__u32 max_sge;
	__u32 max_fast_reg_page_list_len;
	__u32 atomic_cap;
	__aligned_u64 reserved[4];
};

/**
 * struct rmawin_query - RMAWIN_IOC_QUERY: ABI version, features, devices
 * @size: sizeof(struct rmawin_query) as userspace knows it
 * @flags: must be 0
 * @abi_version: out: RMAWIN_ABI_VERSION of the running module
 * @ndevs: out: number of device ports the module knows right now
 * @features: out: RMAWIN_FEAT_* bits
 * @devs_ptr: in: user pointer to an array of @devs_len entries of
 *	@dev_entry_size bytes, or 0 to learn only @ndevs
 * @devs_len: in: number of entries at @devs_ptr; the kernel fills
 *	min(@devs_len, @ndevs, 1024) of them
 * @dev_entry_size: in: size of one entry, at least
 *	offsetofend(struct rmawin_dev_info, atomic_cap); 0 if @devs_ptr is 0
 */
struct rmawin_query {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 ndevs;
	__aligned_u64 features;
	__aligned_u64 devs_ptr;
	__u32 devs_len;
	__u32 dev_entry_size;
};

#define RMAWIN_IOC_QUERY	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_QUERY)

/**
 * struct rmawin_ep_bind - RMAWIN_IOC_EP_BIND: attach the endpoint to a device
 * @size: sizeof(struct rmawin_ep_bind) as userspace knows it
 * @flags: must be 0
 * @ibdev: name of the RDMA device, NUL-terminated
 * @port: port number to use, from 1; 0 picks the first active port
 * @reserved: zero
 *
 * Allocates the endpoint's protection domain on the device.  An endpoint
 * binds once (-EBUSY after); a name no device has is -ENODEV; a device
 * whose ports are all down is -ENETDOWN.  When the device goes away (e.g.
 * ``rdma link del``) everything the endpoint holds on it is released and
 * later calls fail with -ENODEV.
 */
struct rmawin_ep_bind {
	__u32 size;
	__u32 flags;
	char ibdev[RMAWIN_DEVNAME_MAX];
	__u32 port;
	__u32 reserved;
};

#define RMAWIN_IOC_EP_BIND	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_EP_BIND)

/* Largest group the module accepts. */
#define RMAWIN_MAX_RANKS	4096

/**
 * struct rmawin_addr - a rank's listen address
 * @family: AF_INET or AF_INET6
 * @port: TCP-style port number in host byte order, 1..65535
 * @scope_id: IPv6 scope (interface index), 0 otherwise
 * @addr: the address in network byte order; IPv4 uses the first 4 bytes
 *	and the other 12 must be zero
 */
struct rmawin_addr {
	__u16 family;
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/* Bytes of a job key GROUP_JOIN accepts */
#define RMAWIN_JOB_KEY_MIN	16
#define RMAWIN_JOB_KEY_MAX	64

/**
 * struct rmawin_group_join - RMAWIN_IOC_GROUP_JOIN: join a group of ranks
 * @size: sizeof(struct rmawin_group_join) as userspace knows it
 * @flags: must be 0
 * @rank: this endpoint's rank, below @nranks
 * @nranks: number of ranks, 1..RMAWIN_MAX_RANKS
 * @addrs_ptr: user pointer to @nranks struct rmawin_addr, one per rank
 * @key_ptr: user pointer to the job's secret, @key_len bytes; 0 only for a
 *	group of one
 * @timeout_ms: how long to wait for every peer, 0 for the default (30 s)
 * @key_len: RMAWIN_JOB_KEY_MIN..RMAWIN_JOB_KEY_MAX, or 0 with @key_ptr 0
 *
 * Collective: every rank calls it with the same @nranks, @addrs and key.
 * The endpoint listens on its own address with rdma_cm, connects one RC
 * queue pair to each lower rank and accepts one from each higher rank, and
 * returns when it is connected to every peer.  If the endpoint is not
 * bound yet it binds to the RDMA device that owns its address.
 *
 * Membership is authenticated: both ends of every connection prove that
 * they hold the key with an HMAC-SHA256 over the group's shape (a hash of
 * @nranks and @addrs), both ranks, both queue pair numbers and fresh
 * nonces from both sides.  The key never crosses the wire.  A peer that
 * has not proven it gets nothing (no window key, no message is acted on)
 * and has no remote access to this endpoint's memory.  A connection that
 * fails the proof is dropped and counted (debugfs: auth_failures), and
 * the join goes on waiting for the real peer until the timeout.  The
 * kernel keeps the key only as the keyed hash's state, and drops it with
 * the group.
 *
 * Return: 0; -EINVAL for a bad rank, size, address, flag or key length;
 * -ENOKEY for a group of more than one without a key; -EFAULT for a bad
 * @addrs_ptr or @key_ptr; -EBUSY if already joined; -EADDRINUSE if the
 * address is taken; -EADDRNOTAVAIL if no RDMA device owns it (in the
 * caller's network namespace); -ETIMEDOUT if not every peer connected in
 * time; -EKEYREJECTED if, by then, a peer that never joined had answered
 * with a wrong proof; -ECONNREFUSED if a peer refused us (another group
 * shape on the same address) and none joined later; -ENODEV if the device
 * went away.  On failure the endpoint is left as before the call and may
 * join again.
 */
struct rmawin_group_join {
	__u32 size;
	__u32 flags;
	__u32 rank;
	__u32 nranks;
	__aligned_u64 addrs_ptr;
	__aligned_u64 key_ptr;
	__u32 timeout_ms;
	__u32 key_len;
};

#define RMAWIN_IOC_GROUP_JOIN	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_GROUP_JOIN)

/**
 * struct rmawin_barrier - RMAWIN_IOC_BARRIER: wait until every rank enters
 * @size: sizeof(struct rmawin_barrier) as userspace knows it
 * @flags: must be 0
 *
 * Collective.  A dissemination barrier: ceil(log2(nranks)) rounds of one
 * message each.  Return: 0; -ENOTCONN before GROUP_JOIN; -ECONNRESET if a
 * peer left the group; -ENODEV if the device went away; -EINTR on a
 * signal (the group is then unusable for barriers: close it).
 */
struct rmawin_barrier {
	__u32 size;
	__u32 flags;
};

#define RMAWIN_IOC_BARRIER	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_BARRIER)

/**
 * struct rmawin_win_create - RMAWIN_IOC_WIN_CREATE: expose memory to the group
 * @size: sizeof(struct rmawin_win_create) as userspace knows it
 * @flags: 0, or RMAWIN_WIN_ALLOCATE, RMAWIN_WIN_SAME_OP and (with it)
 *	RMAWIN_WIN_NIC_SMALL_INTS
 * @base: start of the window in the caller's memory (any alignment, 8
 *	bytes with RMAWIN_WIN_SAME_OP); must be 0 with RMAWIN_WIN_ALLOCATE
 * @length: bytes; 0 is legal (the rank exposes nothing); a multiple of 8
 *	with RMAWIN_WIN_SAME_OP
 * @disp_unit: unit of target displacements into this window, >= 1
 * @win: out: the window's handle, the same on every rank
 * @mmap_offset: in: 0; out, with RMAWIN_WIN_ALLOCATE: the offset at which
 *	to mmap(MAP_SHARED) the endpoint's file to reach the window's memory
 *
 * Collective, in the same order on every rank.  Without flags the pages
 * at @base are pinned (charged to RLIMIT_MEMLOCK unless CAP_IPC_LOCK);
 * with RMAWIN_WIN_ALLOCATE the module allocates zeroed pages (charged the
 * same way) that the process maps with mmap().  Either way they are
 * registered with fast registration in as many memory regions as the
 * device needs, and their keys sent to every member; the call returns
 * once it has every member's.  A mapping of an allocated window outlives
 * the window safely: its pages are freed when the last user lets go.
 *
 * Return: 0; -EINVAL for flags (RMAWIN_WIN_NIC_SMALL_INTS without
 * RMAWIN_WIN_SAME_OP too), reserved, a zero @disp_unit, a @base or a
 * @length not a multiple of 8 with RMAWIN_WIN_SAME_OP; -EFAULT for
 * memory that is not mapped writable; -ENOMEM (or -EPERM) beyond
 * RLIMIT_MEMLOCK; -ENOTCONN before GROUP_JOIN; -ECONNRESET if a member
 * left; -ENODEV if the device went away.
 */
struct rmawin_win_create {
	__u32 size;
	__u32 flags;
	__aligned_u64 base;
	__aligned_u64 length;
	__u32 disp_unit;
	__u32 win;
	__aligned_u64 mmap_offset;
};

/* The module allocates the window's memory; mmap it at @mmap_offset. */
#define RMAWIN_WIN_ALLOCATE	0x1U
/*
 * A promise (MPI's accumulate_ops=same_op_no_op, which same_op implies):
 * concurrent accumulate-family operations on any one location of the
 * window all use the same op, or NO_OP.  Operations on 8-byte integers
 * (INT64, UINT64) then go through the device's atomics, on the aligned
 * 8-byte words their elements lie in, with no work at the target's CPU:
 * SUM, NO_OP and compare_and_swap are one device atomic each (one round
 * trip); the others are a compare-and-swap loop from the origin, which
 * guesses first what its last atomic left in that word (one round trip
 * when nobody else changed it).  Their target offset must be a multiple
 * of 8 (else -EINVAL).  Integers of 1, 2 and 4 bytes, FLOAT and DOUBLE
 * stay with the target's kernel (one message per 448 bytes, or from 2 KiB
 * on an RDMA write into its inbox per 8 KiB), unless
 * RMAWIN_WIN_NIC_SMALL_INTS is given too.  They take effect in the order
 * they were issued, as on any window: one that takes several work
 * requests (a loop, several elements) holds back the next to its target
 * until it is over.  Collective: give it on every rank or on none.
 */
#define RMAWIN_WIN_SAME_OP	0x2U
/*
 * With RMAWIN_WIN_SAME_OP only (else -EINVAL; RMAWIN_FEAT_NIC_SMALL_FLAG):
 * integers of 1, 2 and 4 bytes take the device's atomics too, as
 * compare-and-swap loops on the words they lie in, their target offset a
 * multiple of their size (else -EINVAL).  One device atomic per 8 bytes:
 * it pays for single elements and counters, and costs a round trip per
 * word on arrays, which the target's kernel takes whole.  Kernels with
 * RMAWIN_FEAT_NIC_INT_ATOMICS but without RMAWIN_FEAT_NIC_SMALL_FLAG
 * behave as if every same_op window had it.  Collective, as SAME_OP.
 */
#define RMAWIN_WIN_NIC_SMALL_INTS	0x4U

#define RMAWIN_IOC_WIN_CREATE	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_WIN_CREATE)

/**
 * struct rmawin_win_free - RMAWIN_IOC_WIN_FREE: release a window
 * @size: sizeof(struct rmawin_win_free) as userspace knows it
 * @flags: must be 0
 * @win: the window
 * @reserved: zero
 *
 * Collective: completes outstanding operations, waits until every member
 * frees it (so nobody still reaches into it), then unregisters and unpins
 * every page.  Return: 0; -ENOENT for an unknown window (or one still being
 * created, or freed, by another thread); -EBUSY, with nothing done, while
 * another thread waits on the window (LOCK, START, WAIT); -EINTR on a fatal
 * signal; an error of an outstanding operation or of the barrier (the
 * window is freed anyway).
 */
struct rmawin_win_free {
	__u32 size;
	__u32 flags;
	__u32 win;
	__u32 reserved;
};

#define RMAWIN_IOC_WIN_FREE	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_WIN_FREE)

/**
 * struct rmawin_win_rank - one rank's part of a window
 * @length: bytes the rank exposes
 * @disp_unit: the unit of displacements into it
 * @reserved: zero
 */
struct rmawin_win_rank {
	__aligned_u64 length;
	__u32 disp_unit;
	__u32 reserved;
};

/**
 * struct rmawin_win_info - RMAWIN_IOC_WIN_INFO: what every rank exposes
 * @size: sizeof(struct rmawin_win_info) as userspace knows it
 * @flags: must be 0
 * @win: the window
 * @nranks: entries at @ranks_ptr: the group's size
 * @ranks_ptr: user pointer to @nranks struct rmawin_win_rank, written in
 *	rank order
 *
 * What the window's creation exchanged, so that a library can check a
 * target range before it queues an operation.  Return: 0; -EINVAL for
 * flags or an @nranks that is not the group's size; -ENOENT for an unknown
 * window; -EFAULT for an array that is not writable; -ENOTCONN before
 * GROUP_JOIN.
 */
struct rmawin_win_info {
	__u32 size;
	__u32 flags;
	__u32 win;
	__u32 nranks;
	__aligned_u64 ranks_ptr;
};

#define RMAWIN_IOC_WIN_INFO	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_WIN_INFO)

/**
 * enum rmawin_opcode - what one operation descriptor asks for
 * @RMAWIN_OP_PUT: copy @len bytes from @origin into the target window
 * @RMAWIN_OP_GET: copy @len bytes of the target window into @origin
 * @RMAWIN_OP_ACC: target = target @acc_op origin, element by element
 * @RMAWIN_OP_GET_ACC: as ACC, and the target's previous values to @result
 * @RMAWIN_OP_FETCH_OP: GET_ACC of one element
 * @RMAWIN_OP_CAS: one element: if the target equals the element at
 *	@compare, it becomes the one at @origin; the previous value to @result
 * @RMAWIN_OP_PUT_NOTIFY: a put, then a notification (source, @tag,
 *	target_disp, len) queued at the target once the data is visible
 * @RMAWIN_OP_FLUSH: rmawin_flush(): complete every operation issued on
 *	the window (@target: a locked rank, or RMAWIN_ALL_RANKS with any
 *	lock held; -ENOLCK otherwise); every other field zero
 * @RMAWIN_OP_LAST: first unused opcode
 *
 * The accumulate family (ACC to CAS) is applied by the target's kernel,
 * under a per-window lock: atomic per element with respect to every other
 * accumulate-family operation on the window, whichever rank issues it.
 */
enum rmawin_opcode {
	RMAWIN_OP_PUT = 1,
	RMAWIN_OP_GET,
	RMAWIN_OP_ACC,
	RMAWIN_OP_GET_ACC,
	RMAWIN_OP_FETCH_OP,
	RMAWIN_OP_CAS,
	RMAWIN_OP_PUT_NOTIFY,
	RMAWIN_OP_FLUSH,
	RMAWIN_OP_LAST,
};

/**
 * enum rmawin_acc_op - the operation of an accumulate, as MPI's MPI_Op
 * @RMAWIN_ACC_SUM: target + origin
 * @RMAWIN_ACC_PROD: target * origin
 * @RMAWIN_ACC_MIN: origin < target ? origin : target
 * @RMAWIN_ACC_MAX: origin > target ? origin : target
 * @RMAWIN_ACC_BAND: target & origin (integers only)
 * @RMAWIN_ACC_BOR: target | origin (integers only)
 * @RMAWIN_ACC_BXOR: target ^ origin (integers only)
 * @RMAWIN_ACC_LAND: target && origin (integers only)
 * @RMAWIN_ACC_LOR: target || origin (integers only)
 * @RMAWIN_ACC_LXOR: !target != !origin (integers only)
 * @RMAWIN_ACC_REPLACE: origin
 * @RMAWIN_ACC_NO_OP: target unchanged (GET_ACC as an atomic get)
 * @RMAWIN_ACC_LAST: first unused value
 */
enum rmawin_acc_op {
	RMAWIN_ACC_SUM,
	RMAWIN_ACC_PROD,
	RMAWIN_ACC_MIN,
	RMAWIN_ACC_MAX,
	RMAWIN_ACC_BAND,
	RMAWIN_ACC_BOR,
	RMAWIN_ACC_BXOR,
	RMAWIN_ACC_LAND,
	RMAWIN_ACC_LOR,
	RMAWIN_ACC_LXOR,
	RMAWIN_ACC_REPLACE,
	RMAWIN_ACC_NO_OP,
	RMAWIN_ACC_LAST,
};

/**
 * enum rmawin_datatype - element type of an accumulate
 * @RMAWIN_TYPE_INT8: int8_t
 * @RMAWIN_TYPE_UINT8: uint8_t
 * @RMAWIN_TYPE_INT16: int16_t
 * @RMAWIN_TYPE_UINT16: uint16_t
 * @RMAWIN_TYPE_INT32: int32_t
 * @RMAWIN_TYPE_UINT32: uint32_t
 * @RMAWIN_TYPE_INT64: int64_t
 * @RMAWIN_TYPE_UINT64: uint64_t
 * @RMAWIN_TYPE_FLOAT: IEEE 754 binary32
 * @RMAWIN_TYPE_DOUBLE: IEEE 754 binary64
 * @RMAWIN_TYPE_LAST: first unused value
 */
enum rmawin_datatype {
	RMAWIN_TYPE_INT8,
	RMAWIN_TYPE_UINT8,
	RMAWIN_TYPE_INT16,
	RMAWIN_TYPE_UINT16,
	RMAWIN_TYPE_INT32,
	RMAWIN_TYPE_UINT32,
	RMAWIN_TYPE_INT64,
	RMAWIN_TYPE_UINT64,
	RMAWIN_TYPE_FLOAT,
	RMAWIN_TYPE_DOUBLE,
	RMAWIN_TYPE_LAST,
};

/**
 * struct rmawin_op_desc - one one-sided operation
 * @opcode: enum rmawin_opcode
 * @flags: 0, or one of RMAWIN_OP_F_EPOCH_SHARED, RMAWIN_OP_F_EPOCH_EXCLUSIVE
 *	and RMAWIN_OP_F_EPOCH_COMPLETE
 * @acc_op: enum rmawin_acc_op for the accumulate family, else 0
 * @datatype: enum rmawin_datatype for the accumulate family, else 0
 * @target: rank of the target
 * @win: window handle
 * @tag: RMAWIN_OP_PUT_NOTIFY: the notification's tag; else 0
 * @origin: user address of the origin buffer (unused by NO_OP)
 * @len: bytes; for the accumulate family a multiple of the element size
 *	(exactly one element for FETCH_OP and CAS)
 * @target_disp: offset into the target window in units of its disp_unit
 * @result: GET_ACC, FETCH_OP, CAS: user address of @len bytes that receive
 *	the target's previous values; else 0
 * @compare: CAS: user address of the element to compare with; else 0
 * @reserved: zero
 * @user_data: anything; the ring copies it into the operation's
 *	completion entry (RMAWIN_IOC_RMA ignores it)
 *
 * Operations are nonblocking: they complete at the window's next
 * synchronization (fence).  Until then the origin buffer must not be
 * changed (put) or read (get), as in MPI.  The same descriptor goes into
 * an RMAWIN_IOC_RMA batch or a submission ring entry, and both run the
 * same kernel code.
 */
struct rmawin_op_desc {
	__u8 opcode;
	__u8 flags;
	__u8 acc_op;
	__u8 datatype;
	__u32 target;
	__u32 win;
	__u32 tag;
	__aligned_u64 origin;
	__aligned_u64 len;
	__aligned_u64 target_disp;
	__aligned_u64 result;
	__aligned_u64 compare;
	__aligned_u64 reserved;
	__aligned_u64 user_data;
};

/*
 * rmawin_op_desc.flags: the operation is a whole passive-target epoch of
 * its own: lock the target's window (shared or exclusive), apply the
 * operation there, unlock; one message and its answer, handled by the
 * target's kernel, where RMAWIN_IOC_LOCK, the operation and
 * RMAWIN_IOC_UNLOCK take two round trips and three sends from the origin.
 * Only in an RMAWIN_IOC_RMA of this one operation (not in the ring), to
 * another rank, for PUT, GET and the accumulate family, of 1 to
 * RMAWIN_EPOCH_OP_MAX bytes, on a window with no lock held, no PSCW epoch
 * and no fence epoch with operations in it.  The call returns when the
 * epoch is over, as RMAWIN_IOC_UNLOCK would.  If the target's lock cannot
 * be granted at once (held in a conflicting mode, or others wait for it)
 * nothing is done and the call returns -EAGAIN: take the lock the usual
 * way.  The target applies the operation with its CPU, so on a
 * RMAWIN_WIN_SAME_OP window (whose accumulates use the device's atomics)
 * an accumulate-family operation takes the target's lock exclusive even in
 * a shared epoch, for the moment it is applied: it gets -EAGAIN while
 * another rank holds the lock shared.
 */
#define RMAWIN_OP_F_EPOCH_SHARED	0x1U
#define RMAWIN_OP_F_EPOCH_EXCLUSIVE	0x2U
/*
 * rmawin_op_desc.flags: the operation ends the window's PSCW access epoch,
 * whose only target it names (RMAWIN_FEAT_COMPLETE_OP).  Its data travels
 * in the COMPLETE message, whose receipt applies it at the target before
 * it counts the COMPLETE, and the call then ends the access epoch as
 * RMAWIN_IOC_COMPLETE does and returns what that returns: one send where
 * the operation and COMPLETE take two (a put) or three (an accumulate, and
 * its answer).  Only in an RMAWIN_IOC_RMA of this one operation (not in
 * the ring), for a PUT or an ACC of 1 to RMAWIN_EPOCH_OP_MAX bytes to
 * another rank.  The operation is complete at the origin when the call
 * returns (its data is in the message); if the message cannot be
 * delivered the target's RMAWIN_IOC_WAIT fails, and so does this rank's
 * next call that needs that target (-ECONNRESET).
 */
#define RMAWIN_OP_F_EPOCH_COMPLETE	0x4U
/* The most bytes of an epoch operation: one accumulate fragment */
#define RMAWIN_EPOCH_OP_MAX		448

/* sizeof(struct rmawin_op_desc) before @user_data: RMAWIN_IOC_RMA still takes it */
#define RMAWIN_OP_DESC_SIZE_VER0	64

/* Most operations in one RMAWIN_IOC_RMA */
#define RMAWIN_RMA_MAX_OPS	1024

/**
 * struct rmawin_rma - RMAWIN_IOC_RMA: issue a batch of operations
 * @size: sizeof(struct rmawin_rma) as userspace knows it
 * @flags: 0 or RMAWIN_RMA_QUIET
 * @ops_ptr: user pointer to @nops struct rmawin_op_desc
 * @nops: number of operations, 1..RMAWIN_RMA_MAX_OPS
 * @op_size: sizeof(struct rmawin_op_desc) as userspace knows it
 *
 * Every operation is checked before any is issued: a bad one fails the
 * whole batch and nothing is sent.  With RMAWIN_RMA_QUIET, a batch that
 * was issued returns 1 instead of 0 when, as the call returns, every
 * window it used has no operation of this endpoint in flight, their
 * results (a get's data, an accumulate's previous values) are in the
 * caller's buffers, and no error of theirs waits for a synchronization:
 * a FLUSH of such a window would return 0 at once, and until the
 * endpoint issues another operation the library need not make it (an
 * operation often completes within the call that issues it, a same_op
 * window's atomic usually).  Return: 0 (1); -EINVAL for a bad opcode,
 * flag, reserved field or rank; -ENOENT for an unknown window; -ERANGE for
 * a target range beyond the target's window; -EFAULT for origin memory
 * that is not mapped (writable, for a get); -ENOMEM for an origin of more
 * pages than the machine has, which could never be pinned; -EPERM for a
 * target outside
 * any access epoch (no fence opened one, and no lock on that target);
 * -ECONNRESET if the target left; -ENODEV if the device went away.  For
 * an operation with RMAWIN_OP_F_EPOCH_* (above): -EINVAL if it is not
 * alone in the batch, has both flags, targets this rank or is a
 * PUT_NOTIFY or an empty one; -EMSGSIZE beyond RMAWIN_EPOCH_OP_MAX;
 * -EBUSY if the window is in an epoch here (as RMAWIN_IOC_LOCK); -EAGAIN
 * if the target's lock was not free; else what the operation and
 * RMAWIN_IOC_UNLOCK return.  For one with RMAWIN_OP_F_EPOCH_COMPLETE:
 * -EINVAL if it is not alone in the batch, is not a PUT or an ACC, is
 * empty, targets this rank, or the access epoch has another target;
 * -EMSGSIZE beyond RMAWIN_EPOCH_OP_MAX; -EPERM outside a PSCW access
 * epoch; -EBUSY while another thread's START or WAIT waits on the window;
 * -EOPNOTSUPP for an ACC that the window sends to the device's atomics
 * (RMAWIN_WIN_SAME_OP): issue it, then RMAWIN_IOC_COMPLETE; else what
 * RMAWIN_IOC_COMPLETE returns.
 */
struct rmawin_rma {
	__u32 size;
	__u32 flags;
	__aligned_u64 ops_ptr;
	__u32 nops;
	__u32 op_size;
};

/* RMAWIN_IOC_RMA flags */
#define RMAWIN_RMA_QUIET	0x1U

#define RMAWIN_IOC_RMA		_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_RMA)

/**
 * struct rmawin_fence - RMAWIN_IOC_FENCE: close and open an access epoch
 * @size: sizeof(struct rmawin_fence) as userspace knows it
 * @flags: MPI's assert flags (RMAWIN_MODE_*), taken as hints
 * @win: the window
 * @reserved: zero
 *
 * Collective.  Every operation issued on the window by any rank before
 * the fence is complete, at origin and target, when it returns on any
 * rank.  Return: 0; -ENOENT; the first error of an operation of the epoch
 * (-EFAULT, -ECONNRESET, -EIO); an error of the barrier.
 */
struct rmawin_fence {
	__u32 size;
	__u32 flags;
	__u32 win;
	__u32 reserved;
};

#define RMAWIN_IOC_FENCE	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_FENCE)

/* MPI's fence assertions, accepted as hints */
#define RMAWIN_MODE_NOCHECK	0x01U
#define RMAWIN_MODE_NOSTORE	0x02U
#define RMAWIN_MODE_NOPUT	0x04U
#define RMAWIN_MODE_NOPRECEDE	0x08U
#define RMAWIN_MODE_NOSUCCEED	0x10U
#define RMAWIN_MODE_ALL		0x1fU

/* Every rank of the group, as the target of LOCK, UNLOCK and FLUSH. */
#define RMAWIN_ALL_RANKS	0xffffffffU

/* Lock types */
#define RMAWIN_LOCK_TYPE_SHARED		0
#define RMAWIN_LOCK_TYPE_EXCLUSIVE	1

/*
 * LOCK of RMAWIN_ALL_RANKS: every rank but the caller's own, whose lock is
 * left as it is (a lazy lock_all takes its own first, the others when an
 * epoch needs them)
 */
#define RMAWIN_LOCK_F_OTHERS	0x1U

/**
 * struct rmawin_passive - RMAWIN_IOC_LOCK, _UNLOCK, _FLUSH: passive target
 * @size: sizeof(struct rmawin_passive) as userspace knows it
 * @flags: LOCK of RMAWIN_ALL_RANKS: 0 or RMAWIN_LOCK_F_OTHERS; else 0
 * @win: the window
 * @target: a rank, or RMAWIN_ALL_RANKS (lock_all, unlock_all, flush_all)
 * @type: LOCK: RMAWIN_LOCK_TYPE_SHARED or _EXCLUSIVE (RMAWIN_ALL_RANKS
 *	takes shared locks only); else 0
 * @reserved: zero
 *
 * LOCK starts an access epoch to the target and returns when the target's
 * kernel granted the lock: shared locks coexist, an exclusive one excludes
 * every other, and requests are granted in arrival order so that none
 * starves.  FLUSH completes every operation issued on the window, at
 * origin and target.  UNLOCK flushes, then releases the lock.  The target
 * process takes no part.
 *
 * Return: 0; -EINVAL for flags, type, reserved or a bad rank; -ENOENT for
 * an unknown window; -EBUSY to lock a target already locked, to lock
 * after operations of a fence epoch, or to fence while locks are held;
 * -ENOLCK to unlock or flush a target that is not locked; -EBUSY to
 * unlock or flush a target whose grant another thread's LOCK still waits
 * for (flush_all and unlock_all: any rank's), or to lock during another
 * thread's START or WAIT on the window; -ECONNRESET if
 * the target left; -ENODEV.  LOCK waits without holding up the process's
 * other threads.
 */
struct rmawin_passive {
	__u32 size;
	__u32 flags;
	__u32 win;
	__u32 target;
	__u32 type;
	__u32 reserved;
};

#define RMAWIN_IOC_LOCK		_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_LOCK)
#define RMAWIN_IOC_UNLOCK	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_UNLOCK)
#define RMAWIN_IOC_FLUSH	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_FLUSH)

/* WAIT: do not wait, report whether the exposure epoch is over (test) */
#define RMAWIN_WAIT_TEST	0x1U

/**
 * struct rmawin_pscw - RMAWIN_IOC_POST, _START, _COMPLETE, _WAIT
 * @size: sizeof(struct rmawin_pscw) as userspace knows it
 * @flags: WAIT: 0 or RMAWIN_WAIT_TEST; else 0
 * @win: the window
 * @n: POST, START: number of ranks at @ranks_ptr, 1..nranks; else 0
 * @ranks_ptr: POST: the origins allowed in; START: the targets to access;
 *	distinct ranks (__u32 each); else 0
 * @done: out, WAIT with RMAWIN_WAIT_TEST: 1 if the exposure epoch is over
 *	(and closed), 0 if not
 * @reserved: zero
 *
 * Generalized active target synchronization, MPI's post/start/complete/
 * wait/test.  POST opens an exposure epoch to the origins and tells each
 * one; START waits until every target posted to it; COMPLETE completes
 * the access epoch's operations and tells each target; WAIT returns when
 * every origin of the exposure epoch has completed.
 *
 * Return: 0; -EINVAL for flags, reserved, @n, a bad or repeated rank;
 * -EFAULT for @ranks_ptr; -ENOENT for the window; -EBUSY for POST or
 * START while that kind of epoch is open, or START while locks are held
 * or a fence epoch has operations, and for any of the four while another
 * thread's START or WAIT waits on the window; -EPERM for COMPLETE without
 * START or WAIT without POST; -ECONNRESET if a peer left; -ENODEV.
 */
struct rmawin_pscw {
	__u32 size;
	__u32 flags;
	__u32 win;
	__u32 n;
	__aligned_u64 ranks_ptr;
	__u32 done;
	__u32 reserved;
};

#define RMAWIN_IOC_POST		_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_POST)
#define RMAWIN_IOC_START	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_START)
#define RMAWIN_IOC_COMPLETE	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_COMPLETE)
#define RMAWIN_IOC_WAIT		_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_WAIT)

/**
 * struct rmawin_notify_wait - RMAWIN_IOC_NOTIFY_WAIT: take a notification
 * @size: sizeof(struct rmawin_notify_wait) as userspace knows it
 * @flags: must be 0
 * @win: the window whose notifications to take
 * @timeout_ms: -1 waits for ever, 0 does not wait, else milliseconds
 * @source: out: the rank that put
 * @tag: out: its tag
 * @target_disp: out: where the data went, in this window's disp_units
 * @len: out: bytes
 * @lost: out, with -EOVERFLOW: notifications of this window dropped since
 *	the last call that reported a loss
 * @reserved: zero
 *
 * The endpoint has one notification queue, whatever the number of peers;
 * its file is readable (poll, epoll) while the queue is not empty or a
 * loss is unreported.  A notification is queued only after its data is
 * visible in the window.  The queue holds at most RMAWIN_NOTIFY_PER_PEER
 * notifications from each peer; beyond that a notification is dropped (its data is still in
 * the window), and the next NOTIFY_WAIT on its window reports it: it
 * returns -EOVERFLOW once, with @lost set, and the notifications still
 * queued come with the calls after.
 *
 * Return: 0; -EINVAL for flags, reserved or a timeout below -1; -ENOENT
 * for the window; -EOVERFLOW if notifications were lost; -ETIMEDOUT
 * (-EAGAIN with 0) if none came; -EINTR on a signal; -ENOTCONN if the
 * group was torn down meanwhile (a WIN_FREE whose barrier failed does
 * that), -ENODEV if its device was removed: either ends the wait.
 */
struct rmawin_notify_wait {
	__u32 size;
	__u32 flags;
	__u32 win;
	__s32 timeout_ms;
	__u32 source;
	__u32 tag;
	__aligned_u64 target_disp;
	__aligned_u64 len;
	__u32 lost;
	__u32 reserved;
};

/* Notifications the queue holds from each rank before it drops (and reports) them */
#define RMAWIN_NOTIFY_PER_PEER	4096

#define RMAWIN_IOC_NOTIFY_WAIT	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_NOTIFY_WAIT)

/**
 * struct rmawin_ring_offsets - where each part of the ring mapping is
 * @sq_head: __u32 the kernel advances past each entry it has consumed
 * @sq_tail: __u32 userspace advances (store-release) past each entry it
 *	has written
 * @sq_flags: __u32, RMAWIN_SQ_NEED_WAKEUP and RMAWIN_SQ_DEAD
 * @sqes: the descriptor array, sq_entries struct rmawin_op_desc; entry
 *	i of the ring is sqes[i & (sq_entries - 1)]
 * @cq_head: __u32 userspace advances past each completion it has read
 * @cq_tail: __u32 the kernel advances (store-release) past each one it
 *	has written
 * @cqes: cq_entries struct rmawin_cqe
 * @reserved: zero
 *
 * Byte offsets into the mapping; heads and tails are free-running
 * counters, each on its own cache line.
 */
struct rmawin_ring_offsets {
	__u32 sq_head;
	__u32 sq_tail;
	__u32 sq_flags;
	__u32 sqes;
	__u32 cq_head;
	__u32 cq_tail;
	__u32 cqes;
	__u32 reserved;
};

/* Puts and gets up to this many bytes are copied, so the ring takes any origin. */
#define RMAWIN_RING_COPY_MAX	8192

/* sq_flags: the poller sleeps; ring RMAWIN_IOC_RING_ENTER to wake it */
#define RMAWIN_SQ_NEED_WAKEUP	0x1U
/* sq_flags: the poller is gone for good (device removed): use the ioctls */
#define RMAWIN_SQ_DEAD		0x2U
/*
 * sq_flags, with RMAWIN_SQ_NEED_WAKEUP: the poller sleeps because another
 * task wanted its CPU, and a doorbell that runs its entries itself does
 * not wake it for a while; an operation on an empty ring is as well
 * issued with RMAWIN_IOC_RMA meanwhile
 */
#define RMAWIN_SQ_YIELDED	0x4U

/**
 * struct rmawin_cqe - one completion
 * @user_data: the submission's &rmawin_op_desc.user_data
 * @res: what RMAWIN_IOC_RMA would have returned for the operation alone:
 *	0 or a negative errno
 * @flags: RMAWIN_CQE_F_RING: the submission ring itself was bad (a tail
 *	more than sq_entries ahead of the head); every entry up to that tail
 *	was dropped, @user_data is 0.  RMAWIN_CQE_F_QUIET, with @res 0: as
 *	the entry's completion was written, its window had no operation of
 *	this endpoint in flight, their results were in the owner's buffers
 *	and no error of theirs waited for a synchronization (RMAWIN_RMA_QUIET's
 *	verdict for the entry alone): a FLUSH of the window would return 0 at
 *	once, until the endpoint issues another operation
 */
struct rmawin_cqe {
	__aligned_u64 user_data;
	__s32 res;
	__u32 flags;
};

#define RMAWIN_CQE_F_RING	0x1U
#define RMAWIN_CQE_F_QUIET	0x2U

/**
 * struct rmawin_ring_setup - RMAWIN_IOC_RING_SETUP: the zero-syscall path
 * @size: sizeof(struct rmawin_ring_setup) as userspace knows it
 * @flags: must be 0
 * @sq_entries: in: submission entries, a power of two up to 4096, or 0
 *	for 256; out: the number
 * @cq_entries: out: completion entries, twice @sq_entries
 * @idle_us: in: how long the poller spins with nothing to do before it
 *	sleeps, 1..1000000 us, or 0 for 10 ms; out: the value
 * @reserved: zero
 * @mmap_offset: out: mmap(MAP_SHARED) the endpoint's file here...
 * @mmap_len: out: ...this many bytes
 * @off: out: the layout of the mapping
 *
 * Needs a joined group; once per endpoint.  The ring is consumed by a
 * kernel thread, "rmawin_poll/<n>", shared by every ring whose owner has
 * the caller's effective user and cgroups (started for the first, in its
 * cgroups; gone with the last).  It consumes the rings while there is
 * work and, after the largest @idle_us of its rings without any, sets
 * RMAWIN_SQ_NEED_WAKEUP in each and sleeps.  A submitter publishes its
 * tail, then issues a full memory barrier, then reads sq_flags: if the
 * flag is set it calls RMAWIN_IOC_RING_ENTER with RMAWIN_ENTER_WAKEUP
 * (and, to have the entries run at once, RMAWIN_ENTER_SUBMIT).  (The
 * poller sets the flag, issues a full barrier, and reads the tail once
 * more before it sleeps, so one of the two sees the other.)  A doorbell
 * that wakes the poller clears the flag.  The poller also sleeps, before
 * its idle time, when another task has waited for its CPU for a
 * millisecond while it had nothing to do.
 *
 * The poller never pins memory: a put or get of more than 8 KiB through
 * the ring must use an origin range the endpoint already holds pinned (its
 * registration cache, filled by earlier RMAWIN_IOC_RMA transfers), else
 * it completes with -EFAULT.  Smaller transfers are copied through the
 * group's registered bounce buffers.  The poller exits with the endpoint
 * or its device.
 *
 * Return: 0; -EINVAL for flags, reserved, @sq_entries or @idle_us;
 * -ENOTCONN before GROUP_JOIN; -EBUSY if the ring exists; -ENODEV if the
 * device was removed; -ENOMEM.
 */
struct rmawin_ring_setup {
	__u32 size;
	__u32 flags;
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 idle_us;
	__u32 reserved;
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_len;
	struct rmawin_ring_offsets off;
};

#define RMAWIN_IOC_RING_SETUP	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_RING_SETUP)

/* RMAWIN_IOC_RING_ENTER flags: wake the poller */
#define RMAWIN_ENTER_WAKEUP	0x1U
/* ... and run the queued entries in this call */
#define RMAWIN_ENTER_SUBMIT	0x2U

/**
 * struct rmawin_ring_enter - RMAWIN_IOC_RING_ENTER: the doorbell
 * @size: sizeof(struct rmawin_ring_enter) as userspace knows it
 * @flags: RMAWIN_ENTER_WAKEUP, RMAWIN_ENTER_SUBMIT, both or neither
 *
 * RMAWIN_ENTER_SUBMIT runs the submission ring's entries in the caller's
 * system call, exactly as the poller would have: on return every entry
 * published before the call has its completion (unless the completion
 * ring is full).  Only the process that set the ring up may do so.
 * RMAWIN_ENTER_WAKEUP wakes the poller and clears RMAWIN_SQ_NEED_WAKEUP;
 * but when the poller slept because another task wanted its CPU, with
 * RMAWIN_ENTER_SUBMIT it does neither until the poller's time to try
 * again (2 ms, doubling up to 128 ms while its CPU stays taken), the
 * submission being done already.
 *
 * Return: 0; -EINVAL for unknown flags; -ENXIO without a ring; -ENODEV if
 * the poller is gone with the device; with RMAWIN_ENTER_SUBMIT, -EPERM
 * from another process and -EBUSY if entries remain for want of room in
 * the completion ring.
 */
struct rmawin_ring_enter {
	__u32 size;
	__u32 flags;
};

#define RMAWIN_IOC_RING_ENTER	_IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_RING_ENTER)

#endif /* _UAPI_LINUX_RMAWIN_H */
