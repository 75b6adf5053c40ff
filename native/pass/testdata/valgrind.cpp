// A C++ counter annotated as libpmemobj-cpp annotates its concurrent skip list's size: the
// client request in a member function becomes a call of __scry_client_request.
#include <atomic>
#include <cstdint>
#include <valgrind/valgrind.h>

struct counter {
	std::atomic<uint64_t> size;
	void inc() {
		++size;
		VALGRIND_DO_CLIENT_REQUEST_STMT(0x50430005, &size, sizeof(size), 0, 0, 0); // want: libcall=VALGRIND_DO_CLIENT_REQUEST
	}
};

void bump(counter *c) { c->inc(); }
