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

struct bucket {
	long token[4], key[4], value[4];
	long other;
};

/* A lookup loop written in its caller: it leaves with the index of the slot whose token is set
 * and whose key is k (0: none). No load's data flows into i, but which i reaches the read of
 * value[i] was decided by the loads of token[j] and key[j] (implicit flow out of the loop): the
 * read is control dependent on their branches. The read of `other` does not use i, and the last
 * read uses a value of i assigned after the loop: neither depends on the loop's exits. */
__attribute__((noinline)) long exit_index(volatile struct bucket *b, long k, int n)
{
	int i = 0;
	for (int j = 0; j < n; j++) {
		if (!b->token[j]) // @exit-token
			continue;
		if (b->key[j] == k) { // @exit-key
			i = j;
			break;
		}
	}
	long x = b->value[i]; // @exit-read
	long y = b->other; // @exit-other
	i = n - 1;
	long z = b->value[i]; // @exit-killed
	return x + y + z;
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
	volatile struct bucket *b = (struct bucket *)((char *)n + 1024);
	b->token[2] = 1;
	b->key[2] = 9;
	b->value[2] = 77;
	b->value[3] = 3;
	b->other = 5;
	long e = exit_index(b, 9, 4);
	return n[3].x == 5 && n[2].y == 7 && n[1].key == 7 && n[4].key == 8 && e == 85 ? 0 : 1;
}
