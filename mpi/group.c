// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * One rmawin group per communicator that windows are created on, set up
 * through the communicator itself: every rank finds its listen address (the
 * address of its RDMA device's network interface), rank 0 draws a fresh job
 * key and a port base, and the addresses go round with PMPI_Allgather.
 * Rank r listens on port base + r, so ranks that share an address (one host)
 * never share a port.  A port taken by someone else (another job, another
 * communicator) makes the join fail on every rank; the ranks agree on that
 * with one PMPI_Allreduce and try again from a new base.
 *
 * The group hangs off the communicator as an attribute; the attribute and
 * every window on it hold a reference, so a communicator freed while its
 * windows live keeps its group until the last window is freed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "rmawin_mpi.h"

#define RMPI_KEY_LEN	32
#define RMPI_ADDR_LEN	64	/* "[v6 address]:port" and its NUL */
/* Listen ports are drawn from [RMPI_PORT_LO, RMPI_PORT_HI], less the ephemeral range. */
#define RMPI_PORT_LO	10000
#define RMPI_PORT_HI	65535
#define RMPI_JOIN_TRIES	6
#define RMPI_BATCH_OPS	1024
#define RMPI_MAX_DEVS	16

/* what rank 0 hands every rank before each join */
struct rmpi_setup {
	uint8_t key[RMPI_KEY_LEN];
	uint32_t port_base;
};

/* join outcomes, or-ed over the ranks */
#define RMPI_JOIN_RETRY	0x1	/* a port was taken: everyone tries again */
#define RMPI_JOIN_FAIL	0x2

static int rmpi_comm_keyval = MPI_KEYVAL_INVALID;

static int rmpi_group_delete_attr(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)extra;
	rmpi_group_put(attr);
	return MPI_SUCCESS;
}

/* The device: $RMAWIN_IBDEV, else the first active port with a netdev. */
static int rmpi_pick_device(struct rmawin_device *dev)
{
	struct rmawin_device devs[RMPI_MAX_DEVS];
	const char *want = getenv("RMAWIN_IBDEV");
	int n, i;

	n = rmawin_query(NULL, devs, RMPI_MAX_DEVS);
	if (n < 0)
		return n;
	if (n > RMPI_MAX_DEVS)
		n = RMPI_MAX_DEVS;
	for (i = 0; i < n; i++) {
		if (want && *want ? !strcmp(devs[i].name, want)
				  : devs[i].state == 4 && devs[i].netdev[0]) {
			*dev = devs[i];
			return 0;
		}
	}
	return -ENODEV;
}

/* The first IPv4 address of @netdev, else its first global IPv6 one. */
static int rmpi_netdev_addr(const char *netdev, char *ip, size_t len)
{
	struct ifaddrs *ifa, *a;
	int found = 0;

	if (getifaddrs(&ifa))
		return -errno;
	for (int fam = AF_INET; !found && fam; fam = fam == AF_INET ? AF_INET6 : 0) {
		for (a = ifa; a && !found; a = a->ifa_next) {
			const void *src;

			if (!a->ifa_addr || a->ifa_addr->sa_family != fam ||
			    strcmp(a->ifa_name, netdev))
				continue;
			if (fam == AF_INET) {
				src = &((struct sockaddr_in *)a->ifa_addr)->sin_addr;
			} else {
				const struct in6_addr *a6 =
					&((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;

				if (IN6_IS_ADDR_LINKLOCAL(a6))
					continue;
				src = a6;
			}
			found = inet_ntop(fam, src, ip, len) != NULL;
		}
	}
	freeifaddrs(ifa);
	return found ? 0 : -EADDRNOTAVAIL;
}

/* This rank's listen address without the port, and the device's name. */
static int rmpi_local_addr(char *ip, size_t len, char *ibdev, size_t devlen)
{
	const char *env = getenv("RMAWIN_ADDR");
	struct rmawin_device dev;
	int err;

	err = rmpi_pick_device(&dev);
	if (err)
		return err;
	snprintf(ibdev, devlen, "%s", dev.name);
	if (env && *env) {
		if (strlen(env) >= len)
			return -EINVAL;
		snprintf(ip, len, "%s", env);
		return 0;
	}
	return rmpi_netdev_addr(dev.netdev, ip, len);
}

/*
 * Where random port bases come from: the larger stretch of RMPI_PORT_LO ..
 * RMPI_PORT_HI beside the kernel's ephemeral range
 * (net.ipv4.ip_local_port_range, 32768..60999 by default), that is
 * 10000..32767 by default.  rdma_cm gives every connection that was not
 * bound first, the module's connects to our peers among them, a port from
 * the ephemeral range: a listen port there may be taken a moment before by
 * whichever connection drew it, and the join would have to start again.
 */
static void rmpi_port_range(uint32_t nranks, uint32_t *lo, uint32_t *hi)
{
	unsigned int elo = 32768, ehi = 60999;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

	if (f) {
		if (fscanf(f, "%u %u", &elo, &ehi) != 2 || elo > ehi) {
			elo = 32768;
			ehi = 60999;
		}
		fclose(f);
	}
	if (elo < RMPI_PORT_LO)
		elo = RMPI_PORT_LO;
	if (ehi > RMPI_PORT_HI)
		ehi = RMPI_PORT_HI;
	if (elo > ehi) {
		*lo = RMPI_PORT_LO;	/* no overlap */
		*hi = RMPI_PORT_HI;
	} else if (elo - RMPI_PORT_LO >= RMPI_PORT_HI - ehi) {
		*lo = RMPI_PORT_LO;
		*hi = elo - 1;
	} else {
		*lo = ehi + 1;
		*hi = RMPI_PORT_HI;
	}
	/* a stretch too short for the group (rmpi_join() caps it): all of ours */
	if (*lo > *hi || *hi - *lo + 1 < nranks) {
		*lo = RMPI_PORT_LO;
		*hi = RMPI_PORT_HI;
	}
}

/*
 * Rank 0 draws the key and the port base, every rank receives them.  The
 * first try's base may be set with RMAWIN_MPI_PORT (rank 0's environment).
 */
static int rmpi_setup_bcast(MPI_Comm comm, int rank, int nranks, int try, struct rmpi_setup *s)
{
	const char *env = getenv("RMAWIN_MPI_PORT");
	unsigned long fixed = env ? strtoul(env, NULL, 10) : 0;
	uint32_t r, lo, hi;

	if (rank == 0) {
		rmpi_port_range((uint32_t)nranks, &lo, &hi);
		if (getrandom(s->key, sizeof(s->key), 0) != sizeof(s->key) ||
		    getrandom(&r, sizeof(r), 0) != sizeof(r))
			memset(s, 0, sizeof(*s));	/* all-zero: refused below */
		else if (!try && fixed && fixed + (unsigned long)nranks <= 65535)
			s->port_base = (uint32_t)fixed;
		else
			s->port_base = lo + r % (hi - lo + 2 - (uint32_t)nranks);
	}
	if (PMPI_Bcast(s, sizeof(*s), MPI_BYTE, 0, comm) != MPI_SUCCESS)
		return -EIO;
	return s->port_base ? 0 : -EIO;
}

/* "ip:port" (or "[ip]:port") for every rank, from the gathered addresses */
static void rmpi_format_addrs(char *all, int nranks, uint32_t base, char **addrs)
{
	for (int i = 0; i < nranks; i++) {
		char *ip = all + (size_t)i * RMPI_ADDR_LEN;

		/* a peer's string is NUL-terminated within RMPI_ADDR_LEN - 16 */
		ip[RMPI_ADDR_LEN - 16] = '\0';
		snprintf(addrs[i], RMPI_ADDR_LEN, strchr(ip, ':') ? "[%s]:%u" : "%s:%u", ip,
			 base + (unsigned int)i);
	}
}

/* One collective attempt to join; *outcome is RMPI_JOIN_* or-ed over ranks. */
static int rmpi_join_once(MPI_Comm comm, struct rmawin_ep_attr *attr, int try, char *all,
			  char **addrs, struct rmawin_ep **ep, int *outcome)
{
	struct rmpi_setup s = { { 0 }, 0 };
	int err, mine;

	err = rmpi_setup_bcast(comm, attr->rank, attr->nranks, try, &s);
	if (!err) {
		rmpi_format_addrs(all, attr->nranks, s.port_base, addrs);
		attr->job_key = s.key;
		attr->job_key_len = sizeof(s.key);
		err = rmawin_ep_open(attr, ep);
		rmpi_debug("join on %s: %d (%s), ring %d", addrs[attr->rank], err,
			   rmawin_strerror(err), err ? 0 : rmawin_ep_ring_active(*ep));
	}
	mine = !err ? 0 : err == -EADDRINUSE || err == -ECONNREFUSED ? RMPI_JOIN_RETRY
								     : RMPI_JOIN_FAIL;
	if (PMPI_Allreduce(&mine, outcome, 1, MPI_INT, MPI_BOR, comm) != MPI_SUCCESS)
		*outcome = RMPI_JOIN_FAIL;
	if (*outcome && !err) {
		rmawin_ep_close(*ep);
		*ep = NULL;
	}
	if (*outcome && !err)
		err = -EREMOTEIO;	/* another rank failed */
	return err;
}

/*
 * This node's ranks of the job, as the launcher says (Open MPI's
 * OMPI_COMM_WORLD_LOCAL_SIZE, Hydra's MPI_LOCALNRANKS), and at least
 * @comm's ranks that share memory with this one.  Collective over @comm.
 */
static long rmpi_node_ranks(MPI_Comm comm)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS" };
	MPI_Comm node;
	long n = 0, v;
	int size;

	if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
	    MPI_SUCCESS) {
		if (PMPI_Comm_size(node, &size) == MPI_SUCCESS)
			n = size;
		PMPI_Comm_free(&node);
	}
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *e = getenv(vars[i]);

		v = e ? strtol(e, NULL, 10) : 0;
		if (v > n)
			n = v;
	}
	return n;
}

/*
 * Whether the group's endpoint goes without librmawin's ring.  Its poller
 * is a kernel thread that needs a CPU of its own, and MPI ranks spin in
 * their waits: where the job's ranks on this node are at least its online
 * CPUs the poller takes turns with them, and OSU's 8-byte latencies on the
 * ring were 1.6 to 7 times the ioctl path's in a quarter of the figures
 * (Documentation/mpi.rst).
 * RMAWIN_MPI_RING=1 keeps the ring there, 0 leaves it out everywhere;
 * RMAWIN_NO_RING=1 (librmawin's own) still wins.  Collective over @comm
 * whatever the environment says, so that ranks that differ cannot hang.
 */
static int rmpi_no_ring(MPI_Comm comm)
{
	const char *v = getenv("RMAWIN_MPI_RING");
	long ranks = rmpi_node_ranks(comm), cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int no;

	if (v && !strcmp(v, "1"))
		no = 0;
	else if (v && !strcmp(v, "0"))
		no = 1;
	else
		no = cpus > 0 && ranks >= cpus;
	rmpi_debug("ring: %s (%ld ranks on this node, %ld CPUs, RMAWIN_MPI_RING=%s)",
		   no ? "off" : "on", ranks, cpus, v ? v : "auto");
	return no;
}

/* Join every rank of @comm into a new rmawin group (collective). */
static int rmpi_join(MPI_Comm comm, struct rmawin_ep **ep)
{
	char ip[RMPI_ADDR_LEN] = "", ibdev[64] = "", *all, **addrs, *tmo;
	struct rmawin_ep_attr attr = { 0 };
	int err, outcome = RMPI_JOIN_RETRY, ok, all_ok;

	PMPI_Comm_rank(comm, &attr.rank);
	PMPI_Comm_size(comm, &attr.nranks);
	if (attr.nranks > RMPI_PORT_HI - RMPI_PORT_LO - 1)
		return -E2BIG;
	err = rmpi_local_addr(ip, sizeof(ip) - 16, ibdev, sizeof(ibdev));
	all = calloc((size_t)attr.nranks, RMPI_ADDR_LEN * 2 + sizeof(char *));
	if (!all && !err)
		err = -ENOMEM;
	ok = !err;
	if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
		all_ok = 0;
	if (!all_ok) {
		free(all);
		return err ? err : -EREMOTEIO;
	}
	addrs = (char **)(all + (size_t)attr.nranks * RMPI_ADDR_LEN * 2);
	for (int i = 0; i < attr.nranks; i++)
		addrs[i] = all + ((size_t)attr.nranks + i) * RMPI_ADDR_LEN;
	if (PMPI_Allgather(ip, RMPI_ADDR_LEN, MPI_CHAR, all, RMPI_ADDR_LEN, MPI_CHAR, comm) !=
	    MPI_SUCCESS) {
		free(all);
		return -EIO;
	}
	attr.addrs = (const char *const *)addrs;
	attr.ibdev = ibdev;
	if (rmpi_no_ring(comm))
		attr.flags |= RMAWIN_EP_NO_RING;
	tmo = getenv("RMAWIN_MPI_TIMEOUT_MS");
	attr.timeout_ms = tmo ? (unsigned int)strtoul(tmo, NULL, 10) : 0;
	/*
	 * A port taken on one rank may fail its peers otherwise (their
	 * connections reach whoever holds the port: refused, or a key that
	 * does not match): any rank's RMPI_JOIN_RETRY means try again.
	 */
	for (int i = 0; i < RMPI_JOIN_TRIES && (outcome & RMPI_JOIN_RETRY); i++)
		err = rmpi_join_once(comm, &attr, i, all, addrs, ep, &outcome);
	free(all);
	return err;
}

static int rmpi_group_new(MPI_Comm comm, struct rmpi_group **out)
{
	struct rmpi_group *grp = calloc(1, sizeof(*grp));
	int err = grp ? 0 : -ENOMEM;
	int ok, all_ok;

	/* every rank must know whether every other has its memory */
	ok = !err;
	if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
		all_ok = 0;
	if (!all_ok) {
		free(grp);
		return err ? err : -EREMOTEIO;
	}
	err = rmpi_join(comm, &grp->ep);
	if (!err)
		err = rmawin_batch_create(grp->ep, RMPI_BATCH_OPS, &grp->batch);
	if (err) {
		if (grp->ep)
			rmawin_ep_close(grp->ep);
		free(grp);
		return err;
	}
	grp->refs = 1;
	*out = grp;
	return 0;
}

/**
 * rmpi_group_get() - the rmawin group of @comm, joined now if need be
 * @comm: an intracommunicator (collective over it when it has no group yet)
 * @grp: out: the group, with a reference for the caller
 *
 * Return: 0 or a negative errno; -EREMOTEIO if another rank failed.
 */
int rmpi_group_get(MPI_Comm comm, struct rmpi_group **grp)
{
	struct rmpi_group *g;
	int flag = 0, err;

	if (rmpi_comm_keyval == MPI_KEYVAL_INVALID &&
	    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, rmpi_group_delete_attr,
				    &rmpi_comm_keyval, NULL) != MPI_SUCCESS)
		return -ENOMEM;
	if (PMPI_Comm_get_attr(comm, rmpi_comm_keyval, &g, &flag) != MPI_SUCCESS)
		return -EINVAL;
	if (!flag) {
		err = rmpi_group_new(comm, &g);
		if (err)
			return err;
		if (PMPI_Comm_set_attr(comm, rmpi_comm_keyval, g) != MPI_SUCCESS) {
			rmpi_group_put(g);
			return -ENOMEM;
		}
	}
	__atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
	*grp = g;
	return 0;
}

/**
 * rmpi_group_put() - drop a reference; the last one closes the endpoint
 * @grp: the group
 *
 * Atomic: at MPI_THREAD_MULTIPLE, with one-sided calls in one thread
 * (RMAWIN_MPI_THREAD_MULTIPLE=1), another thread may free the
 * communicator (its attribute's reference) while a window goes.
 */
void rmpi_group_put(struct rmpi_group *grp)
{
	if (__atomic_sub_fetch(&grp->refs, 1, __ATOMIC_ACQ_REL))
		return;
	rmawin_batch_free(grp->batch);
	rmawin_ep_close(grp->ep);
	free(grp);
}
