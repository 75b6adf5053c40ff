// LevelDB driver for the file-system corpus (docs/fs-mode.md, "Real applications").
//
// `driver init` creates the store db/ with the keys init0..init2 (its initial state, not
// recorded). `driver run` is the recorded workload: it opens db/ (LevelDB's recovery turns the
// previous run's log into a level-0 table, writes a new MANIFEST and points CURRENT at it), then
// Puts k0..k2 with WriteOptions.sync = true, and prints "ack KEY" once each Put has returned OK:
// what it acknowledged, which the checker reads back from $SCRY_STDOUT.
#include <cstdio>
#include <cstring>
#include <string>

#include <leveldb/db.h>

#include "../kv.h"

static int put(leveldb::DB *db, const std::string &key, bool sync)
{
	leveldb::WriteOptions wo;
	wo.sync = sync;
	char val[VALUE_SIZE];
	value_of(key.c_str(), val);
	leveldb::Status s = db->Put(wo, key, leveldb::Slice(val, VALUE_SIZE));
	if (!s.ok()) {
		fprintf(stderr, "put %s: %s\n", key.c_str(), s.ToString().c_str());
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "init") != 0 && strcmp(argv[1], "run") != 0)) {
		fprintf(stderr, "usage: driver init|run\n");
		return 2;
	}
	bool init = strcmp(argv[1], "init") == 0;
	leveldb::Options opt;
	opt.create_if_missing = init;
	leveldb::DB *db;
	leveldb::Status s = leveldb::DB::Open(opt, "db", &db);
	if (!s.ok()) {
		fprintf(stderr, "open: %s\n", s.ToString().c_str());
		return 1;
	}
	const char *prefix = init ? "init" : "k";
	for (int i = 0; i < NKEYS; i++) {
		std::string key = prefix + std::to_string(i);
		if (put(db, key, true) != 0)
			return 1;
		if (!init) {
			printf("ack %s\n", key.c_str());
			fflush(stdout);
		}
	}
	delete db;
	return 0;
}
