/* scry_vg.h: the client requests between the scry Valgrind tool (scry_main.c) and its preload
 * (scry_preload.c, which wraps libpmem's, libpmemobj's and libc's functions in the program under
 * test). Request numbers start at VG_USERREQ_TOOL_BASE('S', 'C'). */
#ifndef SCRY_VG_H
#define SCRY_VG_H

enum {
	/* a1: 1 to enter, 0 to leave a library call whose shared mappings of files are PM
	 * (pmem_map_file, pmemobj_create, pmemobj_open); entering, a2 is the call's return
	 * address; leaving, a2 is the address the call returned: the mapping made during the call
	 * that holds it is the PM region (the library's other mappings are its own business) */
	SCRY_VGREQ_PM_CALL = ('S' << 24) | ('C' << 16),
	/* a line read from standard input: a1 the bytes, a2 their count (a1 == 0: end of input),
	 * a3 the return address of the reading call (a read by libc itself is no operation) */
	SCRY_VGREQ_OP_LINE,
	/* a1: the record kind (SCRY_EV_TX_BEGIN, TX_COMMIT, TX_END), a2: the caller's return address */
	SCRY_VGREQ_TX_SITE,
	/* a1: the record kind (SCRY_EV_TX_ADD, SCRY_EV_ALLOC or SCRY_EV_PM_EXCLUDE), a2: addr, a3: size, a4: flags,
	 * a5: the caller's return address */
	SCRY_VGREQ_TX_RANGE,
	/* TX_ABORT: a1 errnum, a2 the caller's return address */
	SCRY_VGREQ_TX_ABORT,
	/* FREE: a1 addr, a2 flags, a3 the caller's return address */
	SCRY_VGREQ_FREE,
	/* a1: 1 to enter, 0 to leave a call the user made to persist through libpmemobj
	 * (pmemobj_persist, pmemobj_flush, pmemobj_drain, pmemobj_mem*): its flushes and fences
	 * are the user's, not the library's own */
	SCRY_VGREQ_USER_PERSIST,
	/* a reservation (pmemobj_reserve, pmemobj_xreserve): a1 its struct pobj_action, a2 addr,
	 * a3 size, a4 ALLOC flags (reserve, zeroed), a5 the caller's return address */
	SCRY_VGREQ_RESERVE,
	/* the reservations whose actions lie in a1[0..a2) end: published (a3 1, a4 the ALLOC flags)
	 * or cancelled (a3 0); a5 the caller's return address */
	SCRY_VGREQ_RESV_END,
};

#endif
