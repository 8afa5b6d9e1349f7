// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Errors: librmawin's negative errnos become MPI error classes, raised
 * through the window's (or communicator's) error handler as MPI requires.
 * Nothing is printed unless RMAWIN_MPI_DEBUG is set.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rmawin_mpi.h"

/**
 * rmpi_errclass() - the MPI error class for a librmawin error
 * @err: a negative errno from librmawin, or 0
 *
 * Return: MPI_SUCCESS for 0, else the class that says the same thing.
 */
int rmpi_errclass(int err)
{
	switch (err) {
	case 0:
		return MPI_SUCCESS;
	case -EPERM:		/* no access epoch to the target */
	case -EBUSY:		/* a conflicting epoch or lock */
	case -ENOLCK:		/* not locked */
		return MPI_ERR_RMA_SYNC;
	case -ERANGE:
		return MPI_ERR_RMA_RANGE;
	case -EFAULT:
		return MPI_ERR_BUFFER;
	case -ENOMEM:
		return MPI_ERR_NO_MEM;
	case -EINVAL:
		return MPI_ERR_ARG;
	default:		/* a peer left, the device went away... */
		return MPI_ERR_OTHER;
	}
}

/**
 * rmpi_win_raise() - report an error of a call on @win
 * @win: the real MPI's window
 * @code: an MPI error code, or MPI_SUCCESS
 *
 * Calls the window's error handler (MPI_ERRORS_ARE_FATAL by default, which
 * does not return), as the real MPI would for its own errors.
 *
 * Return: @code, for the caller to return.
 */
int rmpi_win_raise(MPI_Win win, int code)
{
	if (code != MPI_SUCCESS)
		PMPI_Win_call_errhandler(win, code);
	return code;
}

/**
 * rmpi_comm_raise() - report an error of a call on @comm (window creation)
 * @comm: the communicator
 * @code: an MPI error code, or MPI_SUCCESS
 *
 * Return: @code.
 */
int rmpi_comm_raise(MPI_Comm comm, int code)
{
	if (code != MPI_SUCCESS)
		PMPI_Comm_call_errhandler(comm, code);
	return code;
}

/**
 * rmpi_debug_on() - is RMAWIN_MPI_DEBUG set (to anything but "" or "0")?
 *
 * Return: 1 or 0; read once.
 */
int rmpi_debug_on(void)
{
	static int on = -1;
	const char *v;

	if (on < 0) {
		v = getenv("RMAWIN_MPI_DEBUG");
		on = v && *v && *v != '0';
	}
	return on;
}

/**
 * rmpi_debug() - print a line to stderr if RMAWIN_MPI_DEBUG is set
 * @fmt: printf format, without the newline
 */
void rmpi_debug(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!rmpi_debug_on())
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rmawin-mpi[%d]: %s\n", (int)getpid(), buf);
}
