/* ordering.c: "set V" appends V to a log of slots: the slot's data, then its valid flag, on two
 * cache lines. Buggy: both are written back with clwb and ordered by ONE sfence, so the flag may
 * persist without the data, and "get" (which prints every valid slot) prints 0: an ordering
 * violation. -DFIXED adds the sfence between them. -DHANG / -DCRASH make "get" hang / die with
 * SIGSEGV on a valid slot without data, to test those symptoms. */
#include "common.h"
#include <signal.h>

struct slot {
	uint64_t data;
	char pad1[56];
	uint64_t valid; /* another cache line */
	char pad2[56];
};

enum { NSLOTS = 4096 / sizeof(struct slot) };

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	struct slot *s = (struct slot *)map_pool(argv[1]);
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		unsigned long v;
		if (sscanf(line, "set %lu", &v) == 1) {
			int i = 0;
			while (i < NSLOTS && s[i].valid)
				i++;
			if (i == NSLOTS)
				return 3;
			s[i].data = v;
			clwb(&s[i].data);
#ifdef FIXED
			sfence();
#endif
			s[i].valid = 1;
			clwb(&s[i].valid);
			sfence();
		} else if (strncmp(line, "get", 3) == 0) {
			for (int i = 0; i < NSLOTS && s[i].valid; i++) {
#if defined(HANG)
				while (s[i].data == 0)
					;
#elif defined(CRASH)
				if (s[i].data == 0)
					raise(SIGSEGV);
#endif
				printf("%lu ", (unsigned long)s[i].data);
			}
			printf("\n");
		}
	}
	return 0;
}
