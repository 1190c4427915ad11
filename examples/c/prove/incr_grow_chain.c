/*
 * incr_grow_chain.c — incr_grow.c's lost increment in another shape:
 * statistics in linked hash buckets, each entry a counter of decimal
 * digits (least significant first) as wide as its value. stat_find()
 * walks the chain under the table lock and takes a reference; stat_add()
 * adds under the lock again and, when the carry needs one more digit,
 * splices a wider copy into the chain in place of the entry. A client
 * adding to an entry that another's growing add spliced out in between
 * adds in place, where nobody sees it, or links a wider copy at the
 * bucket's head, which shadows the other's. Bug: lost update of the link
 * to the entry (P3); main exits 1.
 *
 * "hits" sits behind "hints" in one bucket. Two clients add 10 to "hits"
 * N times from 0, the second STAGGER µs after the first has finished: the
 * recorded run loses nothing. With N = 9 both widen the entry (0 -> 10,
 * 90 -> 100); holding the first client between stat_find() and stat_add()
 * of any of its adds lets the second widen the entry under it.
 *
 * mcpredict:args 9 20000
 * mcpredict:reproduce failed
 * mcpredict:window stat_find@read stat_add@write
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DELTA 10
#define NBUCKETS 8

struct entry {
	struct entry *next;
	const char *key;
	int refs;   /* holders, the chain not counted */
	int linked; /* in a chain */
	int ndig;
	unsigned char dig[]; /* dig[0] is the least significant */
};

static struct {
	pthread_mutex_t lock;
	struct entry *bucket[NBUCKETS];
} tab = { PTHREAD_MUTEX_INITIALIZER };
static long rounds;
static unsigned hash(const char *key) { return (unsigned char)key[0] % NBUCKETS; } /* "hits", "hints": one bucket */

__attribute__((noinline)) static struct entry *entry_new(const char *key, const unsigned char *dig, int ndig)
{
	struct entry *s = calloc(1, sizeof *s + (size_t)ndig);
	s->key = key;
	s->ndig = ndig;
	for (int i = 0; i < ndig; i++)
		s->dig[i] = dig[i];
	return s;
}

__attribute__((noinline)) static struct entry *stat_find(const char *key)
{
	pthread_mutex_lock(&tab.lock);
	struct entry *s;
	for (s = tab.bucket[hash(key)]; s && strcmp(s->key, key) != 0; s = s->next) /* @read: the entry ... */
		;
	if (s)
		s->refs++;
	pthread_mutex_unlock(&tab.lock);
	return s;
}

__attribute__((noinline)) static void stat_put(struct entry *s)
{
	pthread_mutex_lock(&tab.lock);
	if (--s->refs == 0 && !s->linked)
		free(s);
	pthread_mutex_unlock(&tab.lock);
}

/* BUG: s was found in another critical section and may be spliced out. */
__attribute__((noinline)) static void stat_add(struct entry *s, int delta)
{
	unsigned char d[24]; /* the new digits */
	pthread_mutex_lock(&tab.lock);
	int n = s->ndig, carry = delta;
	for (int i = 0; i < n; i++) {
		int x = s->dig[i] + carry;
		d[i] = (unsigned char)(x % 10);
		carry = x / 10;
	}
	for (; carry; carry /= 10)
		d[n++] = (unsigned char)(carry % 10);
	if (n > s->ndig) { /* one more digit: a wider entry replaces s */
		struct entry *w = entry_new(s->key, d, n), **pp = &tab.bucket[hash(s->key)];
		while (*pp && *pp != s)
			pp = &(*pp)->next;
		if (!*pp) /* s is no longer in the chain: w goes to the head */
			pp = &tab.bucket[hash(s->key)];
		w->next = *pp == s ? s->next : *pp;
		*pp = w; /* @write: ... spliced out, or shadowed */
		s->linked = 0;
		w->linked = 1;
	} else {
		for (int i = 0; i < n; i++) /* in place */
			s->dig[i] = d[i];
	}
	pthread_mutex_unlock(&tab.lock);
}

static void *client(void *arg)
{
	for (long i = 0; i < rounds; i++) {
		struct entry *s = stat_find("hits");
		stat_add(s, DELTA);
		stat_put(s);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 9;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	static const unsigned char zero[1] = { 0 }, seven[1] = { 7 };
	const char *keys[2] = { "hits", "hints" };
	for (int k = 0; k < 2; k++) { /* linked at the head */
		struct entry *s = entry_new(keys[k], k ? seven : zero, 1);
		s->next = tab.bucket[hash(keys[k])];
		s->linked = 1;
		tab.bucket[hash(keys[k])] = s;
	}

	pthread_t a, b;
	pthread_create(&a, NULL, client, (void *)0);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, client, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	struct entry *s = stat_find("hits");
	long v = 0;
	for (int i = s->ndig - 1; i >= 0; i--)
		v = v * 10 + s->dig[i];
	stat_put(s);
	printf("hits %ld (expected %ld)\n", v, 2 * DELTA * rounds);
	if (v != 2 * DELTA * rounds) {
		fprintf(stderr, "incr_grow_chain: lost increments: hits %ld, expected %ld\n", v, 2 * DELTA * rounds);
		return 1;
	}
	return 0;
}
