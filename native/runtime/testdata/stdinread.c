/* stdinread.c: a program that reads its standard input. Usage: stdinread MODE, with MODE hooked
 * (fgets, with the hook the pass would emit: each line is an operation) or unseen (fread, as
 * libstdc++'s std::cin reads: no hook, no operation). */
#include "common.h"

enum { S_FGETS, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_LIBCALL, "main", 1, "fgets"),
};

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	uint32_t b = __scry_register_module(sites, N_SITES);
	char buf[256];
	if (strcmp(argv[1], "hooked") == 0) {
		char *r;
		do {
			r = fgets(buf, sizeof buf, stdin);
			__scry_post_fgets(b + S_FGETS, r, buf, sizeof buf, stdin);
		} while (r);
	} else {
		while (fread(buf, 1, sizeof buf, stdin) > 0)
			;
	}
	return 0;
}
