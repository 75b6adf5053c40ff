/* wide.c: "set V" appends V to a log of slots, persisted correctly (the data, a fence, then the
 * slot's valid flag), as in rare.c; "fill V", the rare and wide operation, stores V into the
 * first word of each of the pool's last WIDE cache lines and makes them durable with one fence
 * for all: its crash point before that fence has WIDE unpersisted cache lines, WIDE+1
 * program-order prefixes and 2^WIDE crash states. "get" prints every valid slot and the fill. */
#include "common.h"

struct slot {
	uint64_t data;
	char pad1[56];
	uint64_t valid; /* another cache line */
	char pad2[56];
};

enum { NSLOTS = 8, WIDE = 40, LINE = 64 };

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char *pool = map_pool(argv[1]);
	struct slot *s = (struct slot *)pool;
	uint64_t *fill[WIDE];
	for (int i = 0; i < WIDE; i++)
		fill[i] = (uint64_t *)(pool + 4096 - (WIDE - i) * LINE);
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		unsigned long v;
		int n = 0;
		while (n < NSLOTS && s[n].valid)
			n++;
		if (sscanf(line, "set %lu", &v) == 1) {
			if (n == NSLOTS)
				return 3;
			s[n].data = v;
			clwb(&s[n].data);
			sfence();
			s[n].valid = 1;
			clwb(&s[n].valid);
			sfence();
		} else if (sscanf(line, "fill %lu", &v) == 1) {
			for (int i = 0; i < WIDE; i++) {
				*fill[i] = v;
				clwb(fill[i]);
			}
			sfence();
		} else if (strncmp(line, "get", 3) == 0) {
			for (int i = 0; i < NSLOTS && s[i].valid; i++)
				printf("%lu ", (unsigned long)s[i].data);
			for (int i = 0; i < WIDE; i++)
				printf("%c", *fill[i] ? 'f' : '.');
			printf("\n");
		}
	}
	return 0;
}
