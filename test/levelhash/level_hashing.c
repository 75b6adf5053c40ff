// level_hashing.c: a persistent hash table built the way Level Hashing is (Zuo, Hua and Wu,
// "Write-Optimized and High-Performance Hashing Index Scheme for Persistent Memory", OSDI'18),
// written for scry from the paper's description, and persisted the way its public code does:
// each updated cache line is written back with clflush, ordered with mfence. WITCHER (SOSP'21,
// §2 and §6) tested that code and reports ordering and atomicity bugs in it; this port keeps
// the same persistence order on purpose, so it has them too:
//   - insert sets a slot's token before the slot's key and value are flushed (WITCHER's
//     Figure 1(b)): the token can persist without the data;
//   - update moves a key to an empty slot of its bucket and flips two tokens with two stores
//     (Figure 1(c)): a crash between them loses the key;
//   - an in-place update rewrites a 15-byte value with one memcpy: it can tear;
//   - a movement makes an item valid in its new bucket before its old slot is reused: a crash
//     in between duplicates it;
//   - a resize rehashes the bottom level into a new top level, then rewrites the level
//     pointers and the level size with separate stores: a crash between them loses keys.
//
// Design (paper §3): two levels of buckets, the top one with 2^N buckets and the bottom one with
// 2^(N-1); a key may live in two buckets of each level (two hash functions, each taken modulo
// the level's number of buckets, so the old top level keeps its items' places when it becomes
// the bottom level). A bucket holds 4 slots and a token per slot (1: in use).
// Inserts try both top buckets, then both bottom buckets, then move one item of a candidate
// bucket to its other bucket (one movement), and when all fail resize: a new top level twice as
// large is allocated, the bottom level's items are rehashed into it, the old top level becomes
// the bottom level. Storage is one PM file (libpmem) with a bump allocator; levels are kept as
// offsets so the file can be mapped anywhere.
//
// Usage: level_hashing POOL < OPS, with the operations of `scry workload kv` (PMDK mapcli's
// syntax): `i K` inserts key K (or, when K is present, updates its value), `r K` removes it,
// `c K` prints its value or that it is absent. The value an `i` writes names the operation that
// wrote it (`v` or `u`, then the number of the input line in this run), so a crash state that
// shows an older value of a key is told apart. At the end it prints the number of items.
#include <emmintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_SIZE (16u << 20)
#define MAGIC 0x4c4556454c484153ull /* "LEVELHAS" */
#define ASSOC 4
#define KEY_LEN 16
#define VAL_LEN 15
#define INITIAL_LEVEL 3 /* top level of 2^3 buckets */

struct item {
	char key[KEY_LEN];
	char value[VAL_LEN];
};

/* 4 + 4 * 31 = 128 bytes: two cache lines; tokens and slot 0's key share the first. */
struct bucket {
	uint8_t token[ASSOC];
	struct item slot[ASSOC];
};

struct header {
	uint64_t magic;
	uint64_t level_size; /* the top level has 2^level_size buckets */
	uint64_t top;        /* offsets of the levels' bucket arrays */
	uint64_t bottom;
	uint64_t item_num[2];
	uint64_t heap;       /* next free offset */
	uint64_t resizes;
};

static char *pm;
static struct header *hd;

/* The public code's persistence primitives. */
static inline void pflush(const void *p) { _mm_clflush(p); }
static inline void asm_mfence(void) { _mm_mfence(); }

static void pflush_range(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)63, e = (uintptr_t)p + n;
	for (; a < e; a += 64)
		pflush((const void *)a);
}

static struct bucket *level(int i) { return (struct bucket *)(pm + (i == 0 ? hd->top : hd->bottom)); }
static uint64_t capacity(int i) { return (uint64_t)1 << (hd->level_size - (uint64_t)i); }

/* Two seeded hash functions over the key string (FNV-1a with different bases, then mixed). */
static uint64_t hash(const char *key, uint64_t seed)
{
	uint64_t h = 1469598103934665603ull ^ seed;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}
#define F_SEED 0x9e3779b97f4a7c15ull
#define S_SEED 0xc2b2ae3d27d4eb4full
static uint64_t f_idx(const char *key, uint64_t cap) { return hash(key, F_SEED) % cap; }
static uint64_t s_idx(const char *key, uint64_t cap) { return hash(key, S_SEED) % cap; }

static uint64_t palloc(uint64_t size)
{
	uint64_t off = (hd->heap + 63) & ~63ull;
	if (off + size > POOL_SIZE) {
		fprintf(stderr, "pool full\n");
		exit(3);
	}
	hd->heap = off + size;
	pflush(&hd->heap);
	asm_mfence();
	return off;
}

static void init(void)
{
	hd->level_size = INITIAL_LEVEL;
	hd->heap = 64;
	hd->top = palloc(sizeof(struct bucket) << INITIAL_LEVEL);
	hd->bottom = palloc(sizeof(struct bucket) << (INITIAL_LEVEL - 1));
	hd->item_num[0] = hd->item_num[1] = 0;
	hd->resizes = 0;
	pflush(hd);
	asm_mfence();
	hd->magic = MAGIC;
	pflush(hd);
	asm_mfence();
}

/* The slot holding key in the bucket, or -1. */
static int find_in(struct bucket *b, const char *key)
{
	for (int j = 0; j < ASSOC; j++)
		if (b->token[j] == 1 && strcmp(b->slot[j].key, key) == 0)
			return j;
	return -1;
}

/* The bucket holding key (its level in *ip, its slot in *jp), or NULL: both buckets of the top
 * level, then of the bottom level. */
static struct bucket *locate(const char *key, int *ip, int *jp)
{
	for (int i = 0; i < 2; i++) {
		struct bucket *lv = level(i);
		uint64_t idx[2] = {f_idx(key, capacity(i)), s_idx(key, capacity(i))};
		for (int t = 0; t < 2; t++) {
			int j = find_in(&lv[idx[t]], key);
			if (j >= 0) {
				*ip = i;
				*jp = j;
				return &lv[idx[t]];
			}
		}
	}
	return NULL;
}

/* level_static_query. */
static const char *query(const char *key)
{
	int i, j;
	struct bucket *b = locate(key, &i, &j);
	return b ? b->slot[j].value : NULL;
}

/* Writes key and value into slot j of b and makes it valid, in the order of the public code's
 * level_insert: the token is set before the slot is flushed. */
static void write_slot(struct bucket *b, int j, const char *key, const char *value, int i)
{
	memcpy(b->slot[j].key, key, KEY_LEN);
	memcpy(b->slot[j].value, value, VAL_LEN);
	b->token[j] = 1;
	pflush_range(b->slot[j].key, KEY_LEN);
	pflush_range(b->slot[j].value, VAL_LEN);
	asm_mfence();
	pflush(&b->token[j]);
	hd->item_num[i]++;
	asm_mfence();
}

static int empty_slot(struct bucket *b)
{
	for (int j = 0; j < ASSOC; j++)
		if (b->token[j] == 0)
			return j;
	return -1;
}

/* One movement (paper §3.3): an item of bucket idx of level i moves to its other bucket on the
 * same level when that has room; the freed slot takes the new item. The copy is made valid before
 * the old slot is reused (the public code's order). */
static int try_movement(int i, uint64_t idx, const char *key, const char *value)
{
	struct bucket *lv = level(i);
	struct bucket *b = &lv[idx];
	for (int j = 0; j < ASSOC; j++) {
		const char *k = b->slot[j].key;
		uint64_t f = f_idx(k, capacity(i)), s = s_idx(k, capacity(i));
		uint64_t alt = f == idx ? s : f;
		if (alt == idx)
			continue;
		int e = empty_slot(&lv[alt]);
		if (e < 0)
			continue;
		memcpy(lv[alt].slot[e].key, b->slot[j].key, KEY_LEN);
		memcpy(lv[alt].slot[e].value, b->slot[j].value, VAL_LEN);
		pflush_range(&lv[alt].slot[e], sizeof(struct item));
		asm_mfence();
		lv[alt].token[e] = 1;
		pflush(&lv[alt].token[e]);
		asm_mfence();
		memcpy(b->slot[j].key, key, KEY_LEN);
		memcpy(b->slot[j].value, value, VAL_LEN);
		pflush_range(&b->slot[j], sizeof(struct item));
		hd->item_num[i]++;
		asm_mfence();
		return 1;
	}
	return 0;
}

static int try_insert(const char *key, const char *value)
{
	for (int i = 0; i < 2; i++) {
		struct bucket *lv = level(i);
		uint64_t f = f_idx(key, capacity(i)), s = s_idx(key, capacity(i));
		int j = empty_slot(&lv[f]);
		if (j >= 0) {
			write_slot(&lv[f], j, key, value, i);
			return 1;
		}
		j = empty_slot(&lv[s]);
		if (j >= 0) {
			write_slot(&lv[s], j, key, value, i);
			return 1;
		}
	}
	for (int i = 0; i < 2; i++) {
		uint64_t f = f_idx(key, capacity(i)), s = s_idx(key, capacity(i));
		if (try_movement(i, f, key, value) || try_movement(i, s, key, value))
			return 1;
	}
	return 0;
}

/* Resize (paper §3.4): a new top level twice as large; the bottom level's items are rehashed
 * into it; then the old top level becomes the bottom level. The level pointers and the level
 * size are three stores, flushed together. */
static void resize(void)
{
	uint64_t ncap = capacity(0) * 2;
	uint64_t noff = palloc(sizeof(struct bucket) * ncap);
	struct bucket *nt = (struct bucket *)(pm + noff);
	struct bucket *bot = level(1);
	uint64_t bcap = capacity(1), moved = 0;
	for (uint64_t b = 0; b < bcap; b++) {
		for (int j = 0; j < ASSOC; j++) {
			if (bot[b].token[j] != 1)
				continue;
			const char *k = bot[b].slot[j].key;
			uint64_t f = f_idx(k, ncap), s = s_idx(k, ncap);
			struct bucket *dst = &nt[f];
			int e = empty_slot(dst);
			if (e < 0) {
				dst = &nt[s];
				e = empty_slot(dst);
			}
			if (e < 0) {
				fprintf(stderr, "resize: no room for %s\n", k);
				exit(4);
			}
			memcpy(&dst->slot[e], &bot[b].slot[j], sizeof(struct item));
			dst->token[e] = 1;
			pflush_range(&dst->slot[e], sizeof(struct item));
			asm_mfence();
			pflush(&dst->token[e]);
			asm_mfence();
			bot[b].token[j] = 0;
			pflush(&bot[b].token[j]);
			asm_mfence();
			moved++;
		}
	}
	hd->bottom = hd->top;
	hd->top = noff;
	hd->level_size++;
	hd->item_num[1] = hd->item_num[0];
	hd->item_num[0] = moved;
	hd->resizes++;
	pflush(hd);
	asm_mfence();
}

static void insert(const char *key, const char *value)
{
	while (!try_insert(key, value))
		resize();
}

/* level_update: a new copy in an empty slot of the same bucket and two token flips; without an
 * empty slot, the value is overwritten in place. */
static int update(const char *key, const char *value)
{
	int i, j;
	struct bucket *b = locate(key, &i, &j);
	if (b == NULL)
		return 0;
	int k = empty_slot(b);
	if (k >= 0) {
		memcpy(b->slot[k].key, key, KEY_LEN);
		memcpy(b->slot[k].value, value, VAL_LEN);
		b->token[j] = 0;
		b->token[k] = 1;
		pflush_range(&b->slot[k], sizeof(struct item));
		asm_mfence();
		pflush(&b->token[j]);
		asm_mfence();
	} else {
		memcpy(b->slot[j].value, value, VAL_LEN);
		pflush_range(b->slot[j].value, VAL_LEN);
		asm_mfence();
	}
	return 1;
}

static int delete(const char *key)
{
	int i, j;
	struct bucket *b = locate(key, &i, &j);
	if (b == NULL)
		return 0;
	b->token[j] = 0;
	pflush(&b->token[j]);
	hd->item_num[i]--;
	asm_mfence();
	return 1;
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL < OPS   (OPS: i K | r K | c K)\n", argv[0]);
		return 2;
	}
	size_t len;
	int is_pmem;
	pm = pmem_map_file(argv[1], POOL_SIZE, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (pm == NULL) {
		perror(argv[1]);
		return 1;
	}
	hd = (struct header *)pm;
	if (hd->magic != MAGIC)
		init();

	char line[256], key[KEY_LEN], value[VAL_LEN];
	unsigned long k, n = 0;
	while (fgets(line, sizeof line, stdin)) {
		n++;
		char op;
		if (sscanf(line, " %c %lu", &op, &k) != 2) {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
		memset(key, 0, sizeof key);
		snprintf(key, sizeof key, "%lu", k);
		switch (op) {
		case 'i':
			memset(value, 0, sizeof value);
			if (query(key)) {
				snprintf(value, sizeof value, "u%lu", n);
				update(key, value);
			} else {
				snprintf(value, sizeof value, "v%lu", n);
				insert(key, value);
			}
			break;
		case 'r':
			delete(key);
			break;
		case 'c': {
			const char *v = query(key);
			if (v)
				printf("%s: %s\n", key, v);
			else
				printf("%s: absent\n", key);
			break;
		}
		default:
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	printf("items: %lu in %lu resizes\n", (unsigned long)(hd->item_num[0] + hd->item_num[1]), (unsigned long)hd->resizes);
	pmem_unmap(pm, len);
	return 0;
}
