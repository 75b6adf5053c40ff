// lines.cpp: a driver for libpmemobj-cpp's example programs under `scry check`.
//
// Most examples are one-shot command-line programs: `example POOL [COMMAND ARGS...]` opens (or
// creates) the pool, does one thing and exits. scry's crash exploration needs operations, which
// are the lines a program reads from standard input. This driver is linked with an example whose
// `main` was renamed `scry_example_main` (-Dmain=scry_example_main on the example's translation
// unit only) and runs it once per line of standard input:
//
//   example-lines [-c LAYOUT:MIB] [-1] POOL [FIXED-ARGS...]
//
//   line "push 5"  ->  scry_example_main(argc, {argv0, POOL, FIXED-ARGS..., "push", "5"})
//
// and prints "[exit N]" after each call, so that the exit status of every invocation is part of
// the output crash images are judged by. The line is read with fgets(3) on stdin, which scry's
// runtime sees as the start of an operation (not getline(3): at -O1 glibc's bits/stdio.h inlines
// it into __getdelim, which scry does not hook).
//
//   -c LAYOUT:MIB  before anything is read, create POOL with pmemobj_create(LAYOUT, MIB MiB) when
//                  it does not exist (the examples that only open their pool tell the user to run
//                  `pmempool create obj --layout=LAYOUT`; Debian has no pmempool). A crash image
//                  always exists, so re-executions skip this.
//   -1             call the example once with POOL and FIXED-ARGS and do not read standard input
//                  (for the examples that read std::cin themselves).
//
// With -DSCRY_MAIN_NOARGS the example's main takes no arguments (it uses a pool path fixed in
// its source, which the harness replaced by scry_shim_pool(), see shim.h).
//
// This file is scry's harness code, not libpmemobj-cpp's.
#include <libpmemobj.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "shim.h"

#ifdef SCRY_MAIN_NOARGS
int scry_example_main();
#else
int scry_example_main(int argc, char *argv[]);
#endif

static const char *pool_path;

const char *
scry_shim_pool()
{
	return pool_path;
}

const char *
scry_shim_fresh(const char *path)
{
	// the snippet examples create the same file in every function: start each afresh
	if (unlink(path) != 0 && errno != ENOENT)
		perror(path);
	return path;
}

static int
call(std::vector<std::string> &words)
{
#ifdef SCRY_MAIN_NOARGS
	(void)words;
	return scry_example_main();
#else
	std::vector<char *> argv;
	for (auto &w : words)
		argv.push_back(&w[0]);
	argv.push_back(nullptr);
	return scry_example_main((int)words.size(), argv.data());
#endif
}

int
main(int argc, char *argv[])
{
	const char *create = nullptr;
	bool once = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			create = argv[++i];
		else if (strcmp(argv[i], "-1") == 0)
			once = true;
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-c LAYOUT:MIB] [-1] POOL [ARGS...]\n", argv[0]);
		return 2;
	}
	pool_path = argv[i];
	std::vector<std::string> fixed = {argv[0]};
	for (; i < argc; i++)
		fixed.push_back(argv[i]);

	if (create) {
		std::string spec(create);
		size_t colon = spec.rfind(':');
		if (colon == std::string::npos) {
			fprintf(stderr, "%s: -c wants LAYOUT:MIB, not %s\n", argv[0], create);
			return 2;
		}
		std::string layout = spec.substr(0, colon);
		size_t mib = strtoul(spec.c_str() + colon + 1, nullptr, 10);
		if (access(pool_path, F_OK) != 0) {
			PMEMobjpool *pop = pmemobj_create(pool_path, layout.c_str(), mib << 20,
							  S_IRUSR | S_IWUSR);
			if (!pop) {
				fprintf(stderr, "%s: pmemobj_create %s: %s\n", argv[0], pool_path,
					pmemobj_errormsg());
				return 2;
			}
			pmemobj_close(pop);
		}
	}

	if (once)
		return call(fixed);

	static char line[1 << 16];
	while (fgets(line, sizeof line, stdin)) {
		std::vector<std::string> words = fixed;
		char *save = nullptr;
		for (char *w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(nullptr, " \t\r\n", &save))
			words.push_back(w);
		int rc = call(words);
		printf("[exit %d]\n", rc);
		fflush(stdout);
	}
	return 0;
}
