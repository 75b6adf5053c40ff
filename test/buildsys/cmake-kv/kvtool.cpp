// kvtool POOL KEY VALUE: stores KEY=VALUE in the kvstore pool POOL.
#include <cstdlib>
#include <exception>
#include <iostream>

#include "kvstore.h"

int main(int argc, char *argv[])
{
	if (argc != 4) {
		std::cerr << "usage: " << argv[0] << " POOL KEY VALUE\n";
		return 2;
	}
	try {
		KVStore kv(argv[1]);
		kv.put(std::strtoull(argv[2], nullptr, 10), std::strtoull(argv[3], nullptr, 10));
	} catch (const std::exception &e) {
		std::cerr << e.what() << '\n';
		return 1;
	}
	return 0;
}
