/* rare.c: "set V" appends V to a log of slots, persisted correctly (the data, a fence, then the
 * slot's valid flag); "get" prints every valid slot. "drop", the rare operation, invalidates the
 * last two slots with one fence for both: a crash may persist the last slot's invalidation
 * without the other's, and "get" then prints one value the drop removes and one it keeps, an
 * outcome neither before nor after the drop (an atomicity violation of the rare operation only). */
#include "common.h"

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
		} else if (strncmp(line, "drop", 4) == 0) {
			for (int i = n - 1; i >= 0 && i >= n - 2; i--) {
				s[i].valid = 0;
				clwb(&s[i].valid);
			}
			sfence();
		} else if (strncmp(line, "get", 3) == 0) {
			for (int i = 0; i < NSLOTS && s[i].valid; i++)
				printf("%lu ", (unsigned long)s[i].data);
			printf("\n");
		}
	}
	return 0;
}
