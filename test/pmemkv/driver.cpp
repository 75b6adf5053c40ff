// driver.cpp: a line-oriented client of pmemkv for test/pmemkv/run.sh.
//
// Usage: driver ENGINE POOL [MIB]
//
// Opens the pmemkv engine ENGINE (cmap, stree, ...) on the pool file POOL, creating it when it
// is missing (MIB MiB, default 64), then reads standard input one line at a time with getline
// (one line, one workload operation for scry) and prints the result of each:
//   put K V     -> "put K: OK" (or the status name)
//   get K       -> "get K: V" or "get K: NOT_FOUND"
//   remove K    -> "remove K: OK" or "remove K: NOT_FOUND"
//   count       -> "count: N"
// Other lines print "?" and are otherwise ignored. Exits 0 at end of input, 1 when the engine
// cannot be opened (with pmemkv's error message on standard error).
// robinhood takes only 8-byte keys and values (anything else is INVALID_ARGUMENT): for it, keys
// and values are padded with '_' to 8 bytes (longer ones are cut), and the padding is taken
// off the values printed.
#include <libpmemkv.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static const char *status_name(pmem::kv::status s)
{
	switch (s) {
	case pmem::kv::status::OK: return "OK";
	case pmem::kv::status::NOT_FOUND: return "NOT_FOUND";
	case pmem::kv::status::NOT_SUPPORTED: return "NOT_SUPPORTED";
	case pmem::kv::status::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
	case pmem::kv::status::OUT_OF_MEMORY: return "OUT_OF_MEMORY";
	case pmem::kv::status::TRANSACTION_SCOPE_ERROR: return "TRANSACTION_SCOPE_ERROR";
	default: return "ERROR";
	}
}

// the next blank-separated word of *p, advancing *p past it ("" at the end of the line)
static std::string word(char **p)
{
	char *s = *p + std::strspn(*p, " \t\r\n");
	size_t n = std::strcspn(s, " \t\r\n");
	*p = s + n;
	return std::string(s, n);
}

static size_t fixed_width; // 8 for robinhood, else 0 (any size)

static std::string fit(std::string s)
{
	if (fixed_width)
		s.resize(fixed_width, '_');
	return s;
}

static std::string unfit(std::string s)
{
	if (fixed_width) {
		size_t n = s.find_last_not_of('_');
		s.resize(n == std::string::npos ? 0 : n + 1);
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: %s ENGINE POOL [MIB]\n", argv[0]);
		return 2;
	}
	const char *engine = argv[1], *path = argv[2];
	unsigned long mib = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 64;
	if (std::strcmp(engine, "robinhood") == 0)
		fixed_width = 8;

	pmem::kv::config cfg;
	if (cfg.put_path(path) != pmem::kv::status::OK ||
	    cfg.put_size(mib << 20) != pmem::kv::status::OK ||
	    cfg.put_create_if_missing(true) != pmem::kv::status::OK) {
		std::fprintf(stderr, "config: %s\n", pmemkv_errormsg());
		return 1;
	}
	pmem::kv::db kv;
	pmem::kv::status s = kv.open(engine, std::move(cfg));
	if (s != pmem::kv::status::OK) {
		std::fprintf(stderr, "open %s %s: %s: %s\n", engine, path, status_name(s),
			     pmemkv_errormsg());
		return 1;
	}

	char *line = nullptr;
	size_t cap = 0;
	while (getline(&line, &cap, stdin) != -1) {
		char *p = line;
		std::string op = word(&p);
		if (op == "put") {
			std::string k = word(&p), v = word(&p);
			std::printf("put %s: %s\n", k.c_str(), status_name(kv.put(fit(k), fit(v))));
		} else if (op == "get") {
			std::string k = word(&p), v;
			s = kv.get(fit(k), &v);
			if (s == pmem::kv::status::OK)
				std::printf("get %s: %s\n", k.c_str(), unfit(v).c_str());
			else
				std::printf("get %s: %s\n", k.c_str(), status_name(s));
		} else if (op == "remove") {
			std::string k = word(&p);
			std::printf("remove %s: %s\n", k.c_str(), status_name(kv.remove(fit(k))));
		} else if (op == "count") {
			std::size_t n = 0;
			s = kv.count_all(n);
			if (s == pmem::kv::status::OK)
				std::printf("count: %zu\n", n);
			else
				std::printf("count: %s\n", status_name(s));
		} else {
			std::printf("?\n");
		}
		std::fflush(stdout);
	}
	std::free(line);
	kv.close();
	return 0;
}
