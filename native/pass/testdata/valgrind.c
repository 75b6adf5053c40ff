/* Valgrind client requests (valgrind.h's inline assembly on amd64): each becomes a call of
 * __scry_client_request with the request array and the default result; no xchgq is left. */
#include <stdint.h>
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>

int on_valgrind(void) {
	return RUNNING_ON_VALGRIND; // want: libcall=VALGRIND_DO_CLIENT_REQUEST
}

unsigned long requests(uint64_t *p) {
	VALGRIND_DO_CLIENT_REQUEST_STMT(0x50430005, p, 8, 0, 0, 0); // want: libcall=VALGRIND_DO_CLIENT_REQUEST
	VALGRIND_MAKE_MEM_DEFINED(p, 8); // want: libcall=VALGRIND_DO_CLIENT_REQUEST
	return VALGRIND_DO_CLIENT_REQUEST_EXPR(7, 0x50430003, p, 8, 0, 0, 0); // want: libcall=VALGRIND_DO_CLIENT_REQUEST
}
