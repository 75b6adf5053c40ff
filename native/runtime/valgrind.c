//go:build ignore

/*
 * valgrind.c: Valgrind client requests. The pass replaces every VALGRIND_DO_CLIENT_REQUEST
 * (valgrind.h's inline-assembly sequence on amd64) with a call of __scry_client_request, which
 * turns pmemcheck's requests into trace records (docs/pmemcheck.md has the table) and answers
 * every request with its default result, as a program sees outside Valgrind: RUNNING_ON_VALGRIND
 * is 0, so code keeps the paths it takes without Valgrind. Requests of other tools (memcheck,
 * helgrind, drd, callgrind, the core's) change nothing.
 *
 * The request numbers are those of pmem's Valgrind fork (pmemcheck/pmemcheck.h, the same in
 * PMDK's bundled copy): VG_USERREQ_TOOL_BASE('P','C') is 'P' << 24 | 'C' << 16, and the
 * requests follow it in order.
 */
#include "rt.h"

#define PMC_BASE ((uint64_t)'P' << 24 | (uint64_t)'C' << 16)
enum {
	PMC_REGISTER_PMEM_MAPPING = PMC_BASE,
	PMC_REGISTER_PMEM_FILE,
	PMC_REMOVE_PMEM_MAPPING,
	PMC_CHECK_IS_PMEM_MAPPING,
	PMC_PRINT_PMEM_MAPPINGS,
	PMC_DO_FLUSH,
	PMC_DO_FENCE,
	PMC_WRITE_STATS = PMC_BASE + 8,
	PMC_SET_CLEAN = PMC_BASE + 17,
	PMC_START_TX,
	PMC_START_TX_N,
	PMC_END_TX,
	PMC_END_TX_N,
	PMC_ADD_TO_TX,
	PMC_ADD_TO_TX_N,
	PMC_REMOVE_FROM_TX,
	PMC_REMOVE_FROM_TX_N,
	PMC_ADD_THREAD_TO_TX_N,
	PMC_REMOVE_THREAD_FROM_TX_N,
	PMC_ADD_TO_GLOBAL_TX_IGNORE,
	PMC_EMIT_LOG = PMC_BASE + 30,
	PMC_DEEP_SYNC,
};

/* libpmemobj's TX_STAGE_WORK (pmemobj_tx_stage). */
#define OBJ_STAGE_WORK 1

/* A record of [addr, addr+len) when its first byte is PM (the replay clips it to the region). */
static int in_pm(uint64_t addr, uint64_t len)
{
	return len > 0 && pm_find((uintptr_t)addr) != NULL;
}

void rt_pm_exclude(uint32_t site, uint64_t addr, uint64_t len)
{
	if (in_pm(addr, len))
		rec_addr_size_flags(SCRY_EV_PM_EXCLUDE, site, addr, len, 0);
}

uint64_t __scry_client_request(uint32_t site, const uint64_t *args, uint64_t dflt)
{
	if (!args || !rt_ready() || (args[0] & 0xffff0000u) != PMC_BASE)
		return dflt;
	rt_self.in_rt = 1;
	win_check(__builtin_frame_address(0));
	uint64_t a1 = args[1], a2 = args[2], a3 = args[3];
	switch (args[0]) {
	case PMC_REGISTER_PMEM_MAPPING:
		/* In a region: the range is PM again (it may have been removed). Else a new region,
		 * as scry_register_pm makes one. */
		if (in_pm(a1, a2))
			rec_addr_size_flags(SCRY_EV_PM_EXCLUDE, site, a1, a2, SCRY_PM_INCLUDE);
		else if (a2 > 0)
			pm_add(a1, a2, NULL, -1, 0, site, 0, PM_WRITABLE);
		break;
	case PMC_REMOVE_PMEM_MAPPING:
		rt_pm_exclude(site, a1, a2);
		break;
	case PMC_DO_FLUSH:
		rt_record_flushes(site, (const void *)(uintptr_t)a1, a2);
		break;
	case PMC_DO_FENCE:
		rt_fence(site);
		break;
	case PMC_SET_CLEAN:
		if (in_pm(a1, a2))
			rec_addr_size(SCRY_EV_SET_CLEAN, site, a1, a2);
		break;
	case PMC_ADD_TO_TX:
	case PMC_ADD_TO_TX_N:
		/* A range the program logs itself, declared part of the libpmemobj transaction the
		 * thread runs: a TX_ADD flagged no_snapshot and no_flush, since libpmemobj neither
		 * snapshots it (an abort does not restore it) nor flushes it at commit (the program
		 * persists it). The _N forms name pmemcheck's transaction number, which scry does not
		 * keep: the thread's transaction is the one. Outside a transaction, nothing. */
		if (args[0] == PMC_ADD_TO_TX_N)
			a1 = a2, a2 = a3;
		if (in_pm(a1, a2) && obj_tx_stage() == OBJ_STAGE_WORK)
			rec_addr_size_flags(SCRY_EV_TX_ADD, site, a1, a2, SCRY_TXADD_NO_SNAPSHOT | SCRY_TXADD_NO_FLUSH);
		break;
	case PMC_ADD_TO_GLOBAL_TX_IGNORE:
		if (in_pm(a1, a2))
			rec_addr_size(SCRY_EV_TX_IGNORE, site, a1, a2);
		break;
	default:
		/* REGISTER_PMEM_FILE, CHECK_IS_PMEM_MAPPING, PRINT_PMEM_MAPPINGS, WRITE_STATS,
		 * EMIT_LOG, DEEP_SYNC (pmemcheck only logs it), START_TX/END_TX (pmemcheck's own
		 * transaction bookkeeping: scry follows libpmemobj's transactions), REMOVE_FROM_TX and
		 * the thread forms (a range once logged stays logged: an undo log cannot forget a
		 * snapshot), the reserved codes: nothing to record. */
		break;
	}
	rt_self.in_rt = 0;
	return dflt;
}
