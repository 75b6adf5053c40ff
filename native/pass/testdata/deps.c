/* deps.c: a program whose static dependence facts (the DEPS record) deps_test.go checks, by the
 * lines marked "// @name". It runs instrumented with the real runtime on a PM file it registers
 * with scry.h. Usage: deps POOL (exit status 0 when the computations came out right). */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scry.h"

struct node {
	long token, key, x, y;
	struct node *next;
};

/* The load of key runs only when token is non-zero: control dependent on the branch, whose
 * condition depends on the load of token. */
__attribute__((noinline)) long guarded(struct node *p)
{
	long x = 0;
	if (p->token) { // @if
		x = p->key; // @key
	}
	return x;
}

/* The stored value depends on the load of x. */
__attribute__((noinline)) void add3(struct node *p, struct node *q)
{
	q->y = p->x + 3; // @add3
}

/* The store's address depends on the load of next. */
__attribute__((noinline)) void through(struct node *p)
{
	p->next->key = 7; // @through
}

/* At -O0 the value goes through two locals (allocas) before it is stored. */
__attribute__((noinline)) void via_locals(struct node *p, struct node *q)
{
	long t = p->x; // @local-load
	long u = t * 2;
	q->key = u; // @local-store
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096) != 0)
		return 100;
	struct node *n = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (n == MAP_FAILED)
		return 100;
	SCRY_REGISTER_PM(n, 4096, argv[1]);
	n[0].token = 1;
	n[0].key = 5;
	n[0].x = 4;
	n[0].next = &n[1];
	n[3].x = guarded(&n[0]); // @ret
	add3(&n[0], &n[2]);
	through(&n[0]);
	via_locals(&n[0], &n[4]);
	return n[3].x == 5 && n[2].y == 7 && n[1].key == 7 && n[4].key == 8 ? 0 : 1;
}
