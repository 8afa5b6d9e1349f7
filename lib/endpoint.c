// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Endpoints: one open /dev/rmawin bound to an RDMA device and (later)
 * joined to a group.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "rmawin_priv.h"

/* An empty variable counts as unset, so that "VAR= prog" overrides it. */
static const char *rmawin_getenv(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* A switch such as RMAWIN_NO_CARRY: set, and not "0". */
static int rmawin_env_on(const char *name)
{
	const char *v = rmawin_getenv(name);

	return v && strcmp(v, "0");
}

/* Every address is parsed up front, so a typo fails here, not at join time. */
static int rmawin_ep_parse_addrs(struct rmawin_ep *ep, const char *const *addrs)
{
	int i, ret;

	ep->addrs = calloc(ep->nranks, sizeof(*ep->addrs));
	if (!ep->addrs)
		return -ENOMEM;
	for (i = 0; i < ep->nranks; i++) {
		ret = rmawin__parse_addr(addrs[i], &ep->addrs[i]);
		if (ret) {
			free(ep->addrs);
			ep->addrs = NULL;
			return ret;
		}
	}
	return 0;
}

/* The device named by the caller or RMAWIN_IBDEV: 1 if there is one. */
static int rmawin_ep_resolve_ibdev(const struct rmawin_ep_attr *attr, char *name)
{
	const char *ibdev = attr->ibdev ? attr->ibdev : rmawin_getenv("RMAWIN_IBDEV");
	size_t len;

	if (!ibdev)
		return 0;
	len = strlen(ibdev);
	if (len >= RMAWIN_DEVNAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, ibdev, len + 1);
	return 1;
}

static int rmawin_ep_bind(struct rmawin_ep *ep)
{
	struct rmawin_ep_bind bind;

	memset(&bind, 0, sizeof(bind));
	memcpy(bind.ibdev, ep->ibdev, sizeof(bind.ibdev));
	bind.port = 0;		/* the first active port */
	return rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_EP_BIND, &bind);
}

static void rmawin_to_uaddr(const struct sockaddr_storage *ss, struct rmawin_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		a->family = AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, 16);
	}
}

static int rmawin_ep_join(struct rmawin_ep *ep, const struct rmawin_ep_attr *attr)
{
	struct rmawin_group_join join;
	struct rmawin_addr *ua;
	int i, ret;

	ua = calloc(ep->nranks, sizeof(*ua));
	if (!ua)
		return -ENOMEM;
	for (i = 0; i < ep->nranks; i++)
		rmawin_to_uaddr(&ep->addrs[i], &ua[i]);
	memset(&join, 0, sizeof(join));
	join.rank = ep->rank;
	join.nranks = ep->nranks;
	join.addrs_ptr = (uintptr_t)ua;
	/* the kernel keeps no copy but the keyed hash; neither do we */
	join.key_ptr = (uintptr_t)attr->job_key;
	join.key_len = attr->job_key ? attr->job_key_len : 0;
	join.timeout_ms = ep->timeout_ms;
	ret = rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_GROUP_JOIN, &join);
	free(ua);
	return ret;
}

/* The job key: none, or 16 to 64 bytes; a group with peers must have one. */
static int rmawin_ep_check_key(const struct rmawin_ep_attr *attr)
{
	if (!attr->job_key != !attr->job_key_len)
		return -EINVAL;
	if (attr->job_key && (attr->job_key_len < RMAWIN_JOB_KEY_MIN ||
			      attr->job_key_len > RMAWIN_JOB_KEY_MAX))
		return -EINVAL;
	return attr->nranks > 1 && !attr->job_key ? -ENOKEY : 0;
}

/* Does the module have feature @bit?  Asked once, at open. */
static int rmawin_ep_has(struct rmawin_ep *ep, uint64_t bit)
{
	struct rmawin_query q;

	memset(&q, 0, sizeof(q));
	return !rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_QUERY, &q) && (q.features & bit);
}

/*
 * rmawin_ep_open() of version 0.3 on: the struct has the job key.  The
 * library calls it by this name; programs by rmawin_ep_open.
 */
int rmawin__ep_open(const struct rmawin_ep_attr *attr, struct rmawin_ep **epp)
{
	struct rmawin_ep *ep;
	int ret;

	if (!attr || !epp)
		return -EINVAL;
	if (attr->nranks < 1 || attr->rank < 0 || attr->rank >= attr->nranks)
		return -EINVAL;
	if (!attr->addrs && attr->nranks > 1)
		return -EINVAL;
	if (attr->flags & ~RMAWIN_EP_KNOWN_FLAGS)
		return -EINVAL;
	if (attr->ibdev && !*attr->ibdev)
		return -EINVAL;
	ret = rmawin_ep_check_key(attr);
	if (ret)
		return ret;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->fd = -1;
	pthread_mutex_init(&ep->lock, NULL);
	ep->rank = attr->rank;
	ep->nranks = attr->nranks;
	ep->flags = attr->flags;
	ep->timeout_ms = attr->timeout_ms;

	if (attr->addrs) {
		ret = rmawin_ep_parse_addrs(ep, attr->addrs);
		if (ret)
			goto err_free_ep;
	}

	ret = rmawin__open_dev();
	if (ret < 0)
		goto err_free_addrs;
	ep->fd = ret;

	/* A named device first; otherwise the join binds to the one that owns addrs[rank]. */
	ret = rmawin_ep_resolve_ibdev(attr, ep->ibdev);
	if (ret < 0)
		goto err_close_fd;
	if (ret) {
		ret = rmawin_ep_bind(ep);
		if (ret)
			goto err_close_fd;
	} else if (!ep->addrs) {
		/* a singleton without an address has nothing to bind by */
		ret = -EINVAL;
		goto err_close_fd;
	}
	/* A group of one needs no connections, but listens if it has an address. */
	if (ep->addrs) {
		ret = rmawin_ep_join(ep, attr);
		if (ret)
			goto err_close_fd;
	}
	ret = rmawin__ring_setup(ep);
	if (ret)
		goto err_close_fd;
	ep->rma_quiet = rmawin_ep_has(ep, RMAWIN_FEAT_RMA_QUIET);
	ep->nic_ints = rmawin_ep_has(ep, RMAWIN_FEAT_NIC_INT_ATOMICS) &&
		       !rmawin_ep_has(ep, RMAWIN_FEAT_NIC_SMALL_FLAG);
	ep->epoch_op = rmawin_ep_has(ep, RMAWIN_FEAT_EPOCH_OP);
	ep->lazy_all = rmawin_ep_has(ep, RMAWIN_FEAT_LAZY_LOCK_ALL);
	ep->carry = rmawin_ep_has(ep, RMAWIN_FEAT_COMPLETE_OP) && 
		    !rmawin_env_on("RMAWIN_NO_CARRY");

	*epp = ep;
	return 0;

err_close_fd:
	close(ep->fd);
err_free_addrs:
	free(ep->addrs);
err_free_ep:
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return ret;
}

/*
 * Version 0.1 of the library had no job key in its struct rmawin_ep_attr:
 * programs built against it reach this one, which reads only the fields
 * they have.  Groups of more than one then fail with -ENOKEY: rebuild.
 */
struct rmawin_ep_attr_v01 {
	int rank;
	int nranks;
	const char *const *addrs;
	const char *ibdev;
	unsigned int timeout_ms;
	unsigned int flags;
};

int rmawin__ep_open_v01(const struct rmawin_ep_attr_v01 *old, struct rmawin_ep **epp);

int rmawin__ep_open_v01(const struct rmawin_ep_attr_v01 *old, struct rmawin_ep **epp)
{
	struct rmawin_ep_attr attr;

	if (!old)
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.rank = old->rank;
	attr.nranks = old->nranks;
	attr.addrs = old->addrs;
	attr.ibdev = old->ibdev;
	attr.timeout_ms = old->timeout_ms;
	attr.flags = old->flags;
	return rmawin__ep_open(&attr, epp);
}

__asm__(".symver rmawin__ep_open_v01,rmawin_ep_open@RMAWIN_0.1");
__asm__(".symver rmawin__ep_open,rmawin_ep_open@@RMAWIN_0.3");

/* Rank and size come from the same launcher, in this order of preference. */
static const struct {
	const char *rank;
	const char *size;
} rmawin_launcher_env[] = {
	{ "RMAWIN_RANK", "RMAWIN_NRANKS" },
	{ "PMI_RANK", "PMI_SIZE" },
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
	{ "SLURM_PROCID", "SLURM_NTASKS" },
};

static int rmawin_env_rank(int *rank, int *nranks)
{
	size_t i;
	int ret;

	for (i = 0; i < sizeof(rmawin_launcher_env) / sizeof(rmawin_launcher_env[0]); i++) {
		const char *r = rmawin_getenv(rmawin_launcher_env[i].rank);
		const char *n = rmawin_getenv(rmawin_launcher_env[i].size);

		if (!r && !n)
			continue;
		if (!r || !n)
			return -EINVAL;
		ret = rmawin__parse_int(r, rank);
		if (ret)
			return ret;
		return rmawin__parse_int(n, nranks);
	}

	/* No launcher: a singleton, as MPI_Init() makes one. */
	*rank = 0;
	*nranks = 1;
	return 0;
}

int rmawin_ep_open_env(struct rmawin_ep **ep)
{
	uint8_t key[RMAWIN_JOB_KEY_MAX];
	struct rmawin_ep_attr attr;
	const char *addrs, *no_ring;
	char **items = NULL;
	int ret, v;

	if (!ep)
		return -EINVAL;

	memset(&attr, 0, sizeof(attr));
	ret = rmawin_env_rank(&attr.rank, &attr.nranks);
	if (ret)
		return ret;

	no_ring = rmawin_getenv("RMAWIN_NO_RING");
	if (no_ring) {
		ret = rmawin__parse_int(no_ring, &v);
		if (ret || v > 1)
			return -EINVAL;
		if (v)
			attr.flags |= RMAWIN_EP_NO_RING;
	}

	attr.ibdev = rmawin_getenv("RMAWIN_IBDEV");

	ret = rmawin__env_key(key, sizeof(key));
	if (ret < 0)
		return ret;
	if (ret) {
		attr.job_key = key;
		attr.job_key_len = ret;
	}

	addrs = rmawin_getenv("RMAWIN_ADDRS");
	if (addrs) {
		ret = rmawin__split_list(addrs, &items);
		if (ret < 0)
			goto out_wipe;
		if (ret != attr.nranks) {
			free(items);
			ret = -EINVAL;
			goto out_wipe;
		}
		attr.addrs = (const char *const *)items;
	}

	ret = rmawin__ep_open(&attr, ep);
	free(items);
out_wipe:
	explicit_bzero(key, sizeof(key));
	return ret;
}

int rmawin_ep_close(struct rmawin_ep *ep)
{
	if (!ep)
		return -EINVAL;
	/* Closing the file releases everything the kernel holds for it. */
	rmawin__ring_free(ep);
	close(ep->fd);
	free(ep->addrs);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return 0;
}

int rmawin_rank(const struct rmawin_ep *ep)
{
	return ep ? ep->rank : -EINVAL;
}

int rmawin_nranks(const struct rmawin_ep *ep)
{
	return ep ? ep->nranks : -EINVAL;
}

int rmawin_ep_fd(const struct rmawin_ep *ep)
{
	return ep ? ep->fd : -EINVAL;
}

int rmawin_barrier(struct rmawin_ep *ep)
{
	struct rmawin_barrier b;

	if (!ep)
		return -EINVAL;
	if (ep->nranks == 1)
		return 0;
	memset(&b, 0, sizeof(b));
	return rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_BARRIER, &b);
}
