/* atomicity.c: two accounts holding 100 in total; "move X" moves X from a to b, "show" prints
 * both. Buggy: the debit and the credit are persisted by two separate fenced steps, so a crash
 * between them loses X: the state is a program-order prefix, yet "show" prints neither the
 * balances before nor after the move (an atomicity violation). -DFIXED keeps both balances in
 * one aligned 8-byte word written by one store, which is failure-atomic. */
#include "common.h"

struct accounts {
	uint32_t a, b; /* one aligned 8-byte word */
};

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	struct accounts *acc = (struct accounts *)map_pool(argv[1]);
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		unsigned x;
		if (strncmp(line, "init", 4) == 0) {
			acc->a = 100;
			acc->b = 0;
			clwb(acc);
			sfence();
		} else if (sscanf(line, "move %u", &x) == 1) {
#ifdef FIXED
			struct accounts n = {acc->a - x, acc->b + x};
			uint64_t w;
			memcpy(&w, &n, sizeof w);
			*(volatile uint64_t *)acc = w;
			clwb(acc);
			sfence();
#else
			acc->a -= x;
			clwb(&acc->a);
			sfence();
			acc->b += x;
			clwb(&acc->b);
			sfence();
#endif
		} else if (strncmp(line, "show", 4) == 0) {
			printf("a=%u b=%u\n", acc->a, acc->b);
		}
	}
	return 0;
}
