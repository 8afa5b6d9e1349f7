// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Parsers for what users hand the library as text: numbers and "ip:port"
 * addresses from the environment, address lists.  Strict: anything that is
 * not exactly what is expected is -EINVAL, never a best guess.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include "rmawin_priv.h"

/* Digits only: strtol() alone would accept leading blanks, signs and "". */
static int rmawin_parse_ulong(const char *s, unsigned long max, unsigned long *val)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*val = v;
	return 0;
}

/**
 * rmawin__parse_int() - parse a non-negative decimal int
 * @s: the text, digits only
 * @val: the value
 *
 * Return: 0, or -EINVAL for anything but digits, or a value above INT_MAX.
 */
int rmawin__parse_int(const char *s, int *val)
{
	unsigned long v;
	int ret;

	ret = rmawin_parse_ulong(s, INT_MAX, &v);
	if (ret)
		return ret;
	*val = (int)v;
	return 0;
}

/* "%eth0" or "%2" after an IPv6 address: the interface of a link-local one. */
static int rmawin_parse_scope(const char *s, uint32_t *scope_id)
{
	unsigned long v;

	if (!rmawin_parse_ulong(s, UINT32_MAX, &v)) {
		*scope_id = v;
		return 0;
	}
	*scope_id = if_nametoindex(s);
	return *scope_id ? 0 : -EINVAL;
}

/**
 * rmawin__parse_addr() - parse a listen address
 * @s: "a.b.c.d:port", or "[ipv6]:port" with an optional "%scope" inside the
 *	brackets; numeric only, no host names
 * @ss: filled with a sockaddr_in or sockaddr_in6, the rest zeroed
 *
 * Return: 0, or -EINVAL for a malformed address or a port missing or
 * outside 1..65535.
 */
int rmawin__parse_addr(const char *s, struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN + 1 + IF_NAMESIZE];
	const char *h, *port_str, *sep;
	unsigned long port;
	size_t hlen;
	int v6;

	if (!s || !ss)
		return -EINVAL;

	v6 = s[0] == '[';
	if (v6) {
		h = s + 1;
		sep = strchr(h, ']');
		if (!sep || sep[1] != ':')
			return -EINVAL;
		hlen = sep - h;
		port_str = sep + 2;
	} else {
		h = s;
		sep = strrchr(h, ':');
		if (!sep)
			return -EINVAL;
		hlen = sep - h;
		port_str = sep + 1;
	}
	if (!hlen || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';

	if (rmawin_parse_ulong(port_str, 65535, &port) || !port)
		return -EINVAL;

	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		char *scope = strchr(host, '%');

		if (scope) {
			*scope++ = '\0';
			if (rmawin_parse_scope(scope, &sin6->sin6_scope_id))
				return -EINVAL;
		}
		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	}
	return 0;
}

/**
 * rmawin__split_list() - split "a,b,c" into its items
 * @list: the text
 * @items: on success, a NULL-terminated array of the items; one allocation,
 *	to be released with free(*items)
 *
 * Return: the number of items, or -EINVAL if one is empty, -ENOMEM.
 */
int rmawin__split_list(const char *list, char ***items)
{
	size_t n = 1, len, i;
	char **v, *copy, *p;

	if (!list || !items)
		return -EINVAL;
	len = strlen(list);
	for (i = 0; i < len; i++)
		n += list[i] == ',';
	if (n > INT_MAX)
		return -EINVAL;

	v = malloc((n + 1) * sizeof(*v) + len + 1);
	if (!v)
		return -ENOMEM;
	copy = (char *)(v + n + 1);
	memcpy(copy, list, len + 1);

	for (i = 0, p = copy; i < n; i++) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (!*p) {
			free(v);
			return -EINVAL;
		}
		v[i] = p;
		if (comma)
			p = comma + 1;
	}
	v[n] = NULL;
	*items = v;
	return (int)n;
}
