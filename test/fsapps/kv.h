/* Shared by the key-value drivers and checkers of the file-system corpus (LevelDB, LMDB, GDBM;
 * docs/fs-mode.md, "Real applications"): the keys each phase writes (the set-up init0..init2, the
 * recorded run k0..k2), the value each key holds, and the checkers' common verdict. C and C++. */
#ifndef FSAPPS_KV_H
#define FSAPPS_KV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NKEYS = 3, VALUE_SIZE = 200 };

/* value_of writes key's value, VALUE_SIZE bytes (no terminating 0), to val: "value-of-KEY;"
 * repeated, then dots; long enough that a torn write shows. */
static inline void value_of(const char *key, char *val)
{
	size_t n = 0;
	while (n < VALUE_SIZE) {
		int w = snprintf(val + n, VALUE_SIZE - n, "value-of-%s;", key);
		if (w < 0 || (size_t)w >= VALUE_SIZE - n)
			break;
		n += (size_t)w;
	}
	memset(val + n, '.', VALUE_SIZE - n);
}

/* check_keys asks lookup(ctx, key, &found) for init0..init2 and for every key the driver
 * acknowledged ("ack KEY" lines of the file $SCRY_STDOUT names). lookup returns 0 with found set,
 * or 1 when the key's value is wrong or the lookup failed (it printed why). check_keys returns 0
 * when every key is there, 1 otherwise, with the reason on standard output. */
static inline int check_keys(int (*lookup)(void *ctx, const char *key, int *found), void *ctx)
{
	char key[64], word[16];
	int found;
	const char *out = getenv("SCRY_STDOUT");
	FILE *f;

	for (int i = 0; i < NKEYS; i++) {
		snprintf(key, sizeof key, "init%d", i);
		if (lookup(ctx, key, &found) != 0)
			return 1;
		if (!found) {
			printf("initial key %s lost\n", key);
			return 1;
		}
	}
	if (out == NULL) {
		printf("SCRY_STDOUT is not set\n");
		return 1;
	}
	if ((f = fopen(out, "r")) == NULL) {
		printf("%s: cannot open\n", out);
		return 1;
	}
	while (fscanf(f, "%15s %63s", word, key) == 2) {
		if (strcmp(word, "ack") != 0)
			continue;
		if (lookup(ctx, key, &found) != 0) {
			fclose(f);
			return 1;
		}
		if (!found) {
			printf("acknowledged key %s lost\n", key);
			fclose(f);
			return 1;
		}
	}
	fclose(f);
	return 0;
}

#endif
