// kv-server (fixed): the buggy twin's server with `set` made durable in order: the value's line
// is written back and fenced before the token is written, so no crash state persists the token
// without the value, and every crash image's run through the client answers as a legal outcome
// does. Checked the same way (docs/servers.md).
// scry: args {pool} {port}
// scry: client client.sh {port}
// scry: workload workload.txt
#include <arpa/inet.h>
#include <immintrin.h>
#include <libpmem.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define POOL_SIZE 4096
#define NKEYS 16

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

/* answer handles one request line and writes its one-line answer into out. */
static void answer(struct record *recs, const char *req, char *out, size_t n)
{
	unsigned long k, v;
	if (sscanf(req, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
		volatile struct record *r = &recs[k];
		r->value = v;
		_mm_clwb((void *)&r->value);
		_mm_sfence();
		r->valid = 1;
		_mm_clwb((void *)&r->valid);
		_mm_sfence();
		snprintf(out, n, "ok\n");
	} else if (sscanf(req, "get %lu", &k) == 1 && k < NKEYS) {
		volatile struct record *r = &recs[k];
		if (r->valid)
			snprintf(out, n, "%lu = %lu\n", k, (unsigned long)r->value);
		else
			snprintf(out, n, "%lu: not found\n", k);
	} else {
		snprintf(out, n, "error: bad request\n");
	}
}

/* serve answers the requests of one connection, one line each, until the client closes it. */
static void serve(struct record *recs, int c)
{
	char buf[512], out[128];
	size_t have = 0;
	for (;;) {
		char *nl = memchr(buf, '\n', have);
		if (nl == NULL) {
			if (have == sizeof buf - 1)
				return; /* a request longer than the buffer */
			ssize_t r = read(c, buf + have, sizeof buf - 1 - have);
			if (r <= 0)
				return;
			have += (size_t)r;
			continue;
		}
		*nl = 0;
		answer(recs, buf, out, sizeof out);
		if (write(c, out, strlen(out)) < 0)
			return;
		have -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, have);
	}
}

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s POOL PORT (requests on 127.0.0.1:PORT: set K V | get K, K < %d)\n", argv[0], NKEYS);
		return 2;
	}
	size_t len;
	struct record *recs = pmem_map_file(argv[1], POOL_SIZE, PMEM_FILE_CREATE, 0600, &len, NULL);
	if (recs == NULL) {
		perror(argv[1]);
		return 1;
	}
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 4) != 0) {
		perror("listen");
		return 1;
	}
	for (;;) {
		int c = accept(s, NULL, NULL);
		if (c < 0)
			continue;
		serve(recs, c);
		close(c);
	}
}
