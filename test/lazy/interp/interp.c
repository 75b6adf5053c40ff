/* interp/interp.c: a tiny persistent-memory interpreter, the program of the lazy-exploration
 * differential test (test/lazy). Built once with `scry cc`; each random program is its
 * arguments and its workload (gen.go).
 *
 *   interp POOL RECOVERY
 *
 * The pool is a 4 KiB file mapped MAP_SHARED; its first WORDS 8-byte words (three cache lines)
 * are the interpreter's memory. At start-up, before reading its workload, the interpreter runs
 * RECOVERY, items separated by commas, each reading words of the pool (on a crash image: the
 * loads a lazy run branches on):
 *
 *   pW       print word W
 *   cW:V:X   if word W holds V, print word X, else print "-"
 *   jW:V     if word W holds V, skip the next item
 *
 * Each line of standard input is one operation, instructions separated by spaces:
 *
 *   sW=V  store V into word W      fW  clwb the cache line of word W      F  sfence
 *   pW    print word W
 *
 * Nothing orders the stores of an operation but its own clwb and sfence: a random operation
 * has bugs by construction (stores left unflushed, stores to two lines persisted by one fence,
 * a value stored in two steps). */
#include <fcntl.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define WORDS 24

static volatile uint64_t *mem;

static int word(const char **s)
{
	char *end;
	long w = strtol(*s, &end, 10);
	if (end == *s || w < 0 || w >= WORDS) {
		fprintf(stderr, "bad word at %s\n", *s);
		exit(2);
	}
	*s = end;
	return (int)w;
}

static uint64_t value(const char **s)
{
	char *end;
	unsigned long long v = strtoull(*s, &end, 10);
	if (end == *s) {
		fprintf(stderr, "bad value at %s\n", *s);
		exit(2);
	}
	*s = end;
	return v;
}

static void expect(const char **s, char c)
{
	if (**s != c) {
		fprintf(stderr, "expected %c at %s\n", c, *s);
		exit(2);
	}
	(*s)++;
}

static void recover(const char *s)
{
	int skip = 0;
	while (*s) {
		char op = *s++;
		int w = word(&s), x = 0;
		uint64_t v = 0;
		if (op == 'c' || op == 'j') {
			expect(&s, ':');
			v = value(&s);
		}
		if (op == 'c') {
			expect(&s, ':');
			x = word(&s);
		}
		if (*s == ',')
			s++;
		if (skip) {
			skip = 0;
			continue;
		}
		switch (op) {
		case 'p':
			printf("r%d=%llu\n", w, (unsigned long long)mem[w]);
			break;
		case 'c':
			if (mem[w] == v)
				printf("r%d=%llu\n", x, (unsigned long long)mem[x]);
			else
				printf("-\n");
			break;
		case 'j':
			skip = mem[w] == v;
			break;
		default:
			fprintf(stderr, "bad recovery item %c\n", op);
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: interp POOL RECOVERY\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror(argv[1]);
		return 1;
	}
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	mem = p;
	recover(argv[2]);
	char line[1024];
	while (fgets(line, sizeof line, stdin)) {
		const char *s = line;
		while (*s && *s != '\n') {
			if (*s == ' ') {
				s++;
				continue;
			}
			char op = *s++;
			switch (op) {
			case 's': {
				int w = word(&s);
				expect(&s, '=');
				mem[w] = value(&s);
				break;
			}
			case 'f':
				_mm_clwb((void *)&mem[word(&s)]);
				break;
			case 'F':
				_mm_sfence();
				break;
			case 'p': {
				int w = word(&s);
				printf("w%d=%llu\n", w, (unsigned long long)mem[w]);
				break;
			}
			default:
				fprintf(stderr, "bad instruction %c\n", op);
				return 2;
			}
		}
	}
	return 0;
}
