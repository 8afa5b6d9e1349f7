/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmarun's shared definitions: a rank and its two output streams, rmarun's
 * own output sinks, the options and the launcher that holds them all, and
 * the functions that one of rmarun's files calls in another:
 *
 *   rmarun.c      options, setup and main()
 *   rmarun_io.c   output: the ranks' streams into rmarun's sinks
 *   rmarun_job.c  the job: signals, starting and reaping ranks, the loop
 */
#ifndef RMARUN_H
#define RMARUN_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#define __noreturn		__attribute__((noreturn))

/* A longer line is split into pieces of this size, each with its prefix. */
#define RMARUN_LINE_MAX		(64 * 1024)
/* Room for one maximal line, its prefix and newline, with no flush between. */
#define RMARUN_SINK_SIZE	(2 * RMARUN_LINE_MAX)

enum { OUT_STDOUT, OUT_STDERR, OUT_NR };

/* One rank's stdout or stderr, as read by rmarun. */
struct stream {
	int fd;			/* read end, -1 once closed */
	size_t len;		/* bytes of an unfinished line in buf */
	char *buf;		/* RMARUN_LINE_MAX bytes, allocated on first data */
};

struct rank {
	pid_t pid;		/* 0 once reaped */
	struct stream io[OUT_NR];
};

/* rmarun's own stdout or stderr, written in whole lines. */
struct sink {
	int fd;
	bool broken;		/* a write failed: output to it is discarded */
	size_t len;
	char buf[RMARUN_SINK_SIZE];
};

struct opts {
	int nranks;
	const char *addr;
	unsigned int port;
	unsigned int timeout_s;
	char **argv;
};

/* Bytes of the job key rmarun makes: 256 bits. */
#define JOB_KEY_BYTES	32

struct launcher {
	struct opts o;
	struct rank *ranks;
	pid_t self;		/* rmarun's pid, as its ranks should see it */
	int live;		/* ranks not reaped yet */
	int devnull;
	int64_t timeout_at;	/* CLOCK_MONOTONIC ms; 0 = none */
	int64_t kill_at;	/* when TERMed ranks get SIGKILL; 0 = none */
	struct rlimit nofile;	/* as rmarun found it, for the ranks */
	bool aborting;		/* the job is being torn down */
	int status;		/* rmarun's exit status; -1 = no failure yet */
	struct sink sinks[OUT_NR];
	struct pollfd *pfds;	/* the signal pipe, then every open stream */
	struct stream **pstreams;
	int *prank;		/* rank of pfds[i], i >= 1 */
	char key[2 * JOB_KEY_BYTES + 1];	/* the job's key, in hex */
};

/* rmarun_io.c */
void __printf(2, 3) msg(struct launcher *l, const char *fmt, ...);
void stream_close(struct stream *st);
void stream_service(struct launcher *l, int rank, struct stream *st);
void stream_drain(struct launcher *l, int rank, struct stream *st);
void flush_sinks(struct launcher *l);

/* rmarun_job.c */
extern int sigpipe_fds[2];
int64_t now_ms(void);
int setup_signals(void);
void fail(struct launcher *l, int status);
int spawn_all(struct launcher *l);
void run_loop(struct launcher *l);

#endif /* RMARUN_H */
