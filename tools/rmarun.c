// SPDX-License-Identifier: GPL-2.0
/*
 * rmarun - start N ranks of a program on this host for rmawin_ep_open_env()
 *
 *   rmarun -n N [--addr IP] [--port BASE] [--timeout S] -- PROGRAM ARGS...
 *
 * Each rank gets RMAWIN_RANK, RMAWIN_NRANKS and RMAWIN_ADDRS (every rank on
 * IP, ports BASE..BASE+N-1), and RMAWIN_JOB_KEY: a fresh random 256-bit key
 * for this job alone, with which its ranks prove to each other that they
 * belong to it.  The ranks' stdout and stderr come back through
 * pipes and are copied, one whole line at a time prefixed with "[rank] ", to
 * rmarun's stdout and stderr.  The first rank to fail takes the others down
 * with it, as an MPI job would.  See Documentation/rmarun.rst.
 *
 * One process, one poll() loop: child exits and signals reach the loop
 * through a self-pipe, so there is no work in signal handlers and no race
 * between "a child died" and "wait for output".
 *
 * This file holds the options, the setup and main(); rmarun_io.c the
 * output, rmarun_job.c the job (signals, ranks, the loop); rmarun.h what
 * they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/resource.h>

#include "rmarun.h"

#define RMARUN_MAX_RANKS	1024
#define RMARUN_DEFAULT_PORT	18515
/* One entry of RMAWIN_VM_ADDRS: IPv6 "%" interface */
#define RMARUN_ADDR_MAX		(INET6_ADDRSTRLEN + IF_NAMESIZE + 1)

#define EXIT_USAGE		2

/* ---- Options ----------------------------------------------------------- */

#define RMARUN_SYNOPSIS \
	"usage: rmarun -n N [--addr IP] [--port BASE] [--timeout S] -- PROGRAM [ARGS...]\n"

static void usage(FILE *f)
{
	fprintf(f, RMARUN_SYNOPSIS
		"  -n N           number of ranks, 1..%d\n"
		"  --addr IP      address of every rank (IPv4 or IPv6); default: this node's\n"
		"                 entry of RMAWIN_VM_ADDRS, else 127.0.0.1\n"
		"  --port BASE    rank i listens on BASE+i (default %d)\n"
		"  --timeout S    kill the job after S seconds, exit 124 (default 0: none)\n",
		RMARUN_MAX_RANKS, RMARUN_DEFAULT_PORT);
}

static void __noreturn __printf(1, 2)
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("rmarun: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n" RMARUN_SYNOPSIS, stderr);
	exit(EXIT_USAGE);
}

/* Digits only: strtoul() would also take blanks, signs and "". */
static bool parse_uint(const char *s, unsigned long min, unsigned long max,
		       unsigned int *val)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*val = v;
	return true;
}

/* Numeric IPv4 or IPv6, the latter with an optional "%interface" as librmawin takes. */
static bool valid_ip(const char *ip)
{
	char host[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	struct in_addr a4;
	const char *scope = strchr(ip, '%');
	size_t len = scope ? (size_t)(scope - ip) : strlen(ip);
	unsigned int idx;

	if (inet_pton(AF_INET, ip, &a4) == 1)
		return true;
	if (len >= sizeof(host))
		return false;
	memcpy(host, ip, len);
	host[len] = '\0';
	if (inet_pton(AF_INET6, host, &a6) != 1)
		return false;
	if (!scope)
		return true;
	scope++;
	return parse_uint(scope, 0, UINT32_MAX, &idx) || if_nametoindex(scope);
}

/*
 * In the test VM, this node's address: the RMAWIN_VM_NODE'th entry of
 * RMAWIN_VM_ADDRS (a private copy, as getenv() memory must not be edited).
 */
static const char *default_addr(void)
{
	const char *list = getenv("RMAWIN_VM_ADDRS"), *node = getenv("RMAWIN_VM_NODE");
	static char addr[RMARUN_ADDR_MAX];
	unsigned int idx = 0;
	const char *p;
	size_t len;

	if (!list || !*list)
		return "127.0.0.1";
	if (node && *node && !parse_uint(node, 0, RMARUN_MAX_RANKS, &idx))
		usage_error("RMAWIN_VM_NODE=%s is not a node index", node);
	for (p = list; idx && p; idx--) {
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		usage_error("RMAWIN_VM_ADDRS=%s has no entry for RMAWIN_VM_NODE", list);
	len = strcspn(p, ",");
	if (len >= sizeof(addr))
		usage_error("RMAWIN_VM_ADDRS=%s: address too long", list);
	memcpy(addr, p, len);
	addr[len] = '\0';
	return addr;
}

static void parse_option(struct opts *o, int c, const char *arg)
{
	unsigned int n;

	switch (c) {
	case 'n':
		if (!parse_uint(arg, 1, RMARUN_MAX_RANKS, &n))
			usage_error("-n %s: not a rank count in 1..%d", arg, RMARUN_MAX_RANKS);
		o->nranks = n;
		break;
	case 'a':
		o->addr = arg;
		break;
	case 'p':
		if (!parse_uint(arg, 1, 65535, &o->port))
			usage_error("--port %s: not a port in 1..65535", arg);
		break;
	case 't':
		if (!parse_uint(arg, 0, INT_MAX, &o->timeout_s))
			usage_error("--timeout %s: not a number of seconds", arg);
		break;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		/* getopt_long() has said what is wrong. */
		fputs(RMARUN_SYNOPSIS, stderr);
		exit(EXIT_USAGE);
	}
}

static void parse_options(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->port = RMARUN_DEFAULT_PORT;
	/* "+": stop at PROGRAM, whose own options are not rmarun's. */
	while ((c = getopt_long(argc, argv, "+n:h", longopts, NULL)) != -1)
		parse_option(o, c, optarg);
	if (!o->nranks)
		usage_error("-n N is required");
	if (optind >= argc)
		usage_error("no PROGRAM given");
	o->argv = argv + optind;
	if (!o->addr)
		o->addr = default_addr();
	if (!valid_ip(o->addr))
		usage_error("%s is not a numeric IPv4 or IPv6 address", o->addr);
	if (o->port + o->nranks - 1 > 65535)
		usage_error("ports %u..%u do not fit below 65536", o->port,
			    o->port + o->nranks - 1);
}

/* ---- Setup ------------------------------------------------------------- */

/*
 * With 0, 1 or 2 closed at startup, a pipe could land there and a rank's
 * dup2() would then clobber it.
 */
static void ensure_std_fds(void)
{
	int fd;

	do
		fd = open("/dev/null", O_RDWR);
	while (fd >= 0 && fd <= STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

/*
 * 1024 ranks need 2048 pipe read ends, over the usual soft limit of 1024.
 * Ranks get the original limit back: select() users depend on it.
 */
static void raise_nofile(struct launcher *l, int nfds)
{
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &l->nofile);
	rl = l->nofile;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t)nfds + 64)
		return;
	rl.rlim_cur = (rlim_t)nfds + 64;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* A fresh key for this job from the kernel's random pool, in hex. */
static int make_job_key(struct launcher *l)
{
	unsigned char raw[JOB_KEY_BYTES];
	size_t got = 0;
	ssize_t r;
	int i;

	while (got < sizeof(raw)) {
		r = getrandom(raw + got, sizeof(raw) - got, 0);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0)
			got += r;
	}
	for (i = 0; i < JOB_KEY_BYTES; i++)
		snprintf(l->key + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

static int launcher_init(struct launcher *l)
{
	int n = 1 + OUT_NR * l->o.nranks, i, out, ret;

	l->status = -1;
	l->self = getpid();
	l->sinks[OUT_STDOUT].fd = STDOUT_FILENO;
	l->sinks[OUT_STDERR].fd = STDERR_FILENO;
	l->ranks = calloc(l->o.nranks, sizeof(*l->ranks));
	l->pfds = calloc(n, sizeof(*l->pfds));
	l->pstreams = calloc(n, sizeof(*l->pstreams));
	l->prank = calloc(n, sizeof(*l->prank));
	if (!l->ranks || !l->pfds || !l->pstreams || !l->prank)
		return -ENOMEM;
	for (i = 0; i < l->o.nranks; i++)
		for (out = 0; out < OUT_NR; out++)
			l->ranks[i].io[out].fd = -1;
	l->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (l->devnull < 0)
		return -errno;
	raise_nofile(l, n);
	ret = make_job_key(l);
	if (ret)
		return ret;
	if (l->o.timeout_s)
		l->timeout_at = now_ms() + (int64_t)l->o.timeout_s * 1000;
	return setup_signals();
}

static void launcher_fini(struct launcher *l)
{
	int i, out;

	for (i = 0; i < l->o.nranks && l->ranks; i++)
		for (out = 0; out < OUT_NR; out++)
			stream_close(&l->ranks[i].io[out]);
	if (l->devnull >= 0)
		close(l->devnull);
	for (i = 0; i < 2; i++)
		if (sigpipe_fds[i] >= 0)
			close(sigpipe_fds[i]);
	free(l->ranks);
	free(l->pfds);
	free(l->pstreams);
	free(l->prank);
	explicit_bzero(l->key, sizeof(l->key));
}

int main(int argc, char **argv)
{
	static struct launcher l = { .devnull = -1 };
	int ret;

	ensure_std_fds();
	parse_options(&l.o, argc, argv);
	ret = launcher_init(&l);
	if (ret) {
		fprintf(stderr, "rmarun: %s\n", strerror(-ret));
		launcher_fini(&l);
		return 1;
	}
	ret = spawn_all(&l);
	if (ret) {
		/* The ranks already started would wait forever for the rest. */
		msg(&l, "cannot start rank %d: %s", l.live, strerror(-ret));
		fail(&l, 1);
	}
	run_loop(&l);
	flush_sinks(&l);
	launcher_fini(&l);
	return l.status < 0 ? 0 : l.status;
}
