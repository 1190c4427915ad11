/*
 * incr_grow.c — memcached 1.4.4's incr (bug 127): the item is looked up in
 * one critical section and incremented in the next. Values are decimal
 * strings in heap items sized to fit; an increment that needs one more
 * digit ("9" -> "10", "99" -> "100") allocates a new item and replaces the
 * old one in the table, any other writes in place. When another client's
 * growing increment replaces the item between item_get() and add_delta(),
 * add_delta() works on the stale, unlinked item: it writes the old value
 * plus delta in place, where nobody sees it, or links a new item that drops
 * the other client's increments. Bug: lost update of the table slot (P3);
 * reference counts keep the stale item alive, so nothing crashes, and main
 * exits 1 when the total is short.
 *
 * Two clients each do N increments by 10 of one key from "0"; the second
 * starts STAGGER µs after the first, which has finished by then, so the
 * recorded run loses nothing. With N = 9 both grow the item ("0" -> "10",
 * "90" -> "100"). Whichever increment of the first client is held between
 * item_get() and add_delta(), the second client reads values it never
 * read in the recorded run (no order of the recorded events gives them)
 * and grows the item under the first, which then works on a stale item.
 *
 * mcpredict:args 9 20000
 * mcpredict:reproduce failed
 * mcpredict:window item_get@read add_delta@write
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define DELTA 10 /* "incr hits 10" */

enum { KEY_HITS, NKEYS };

struct item {
	int refcount; /* holders of the item, the table not counted */
	int linked;   /* in the table */
	int key;
	int nbytes; /* size of data: the digits and the NUL */
	char data[];
};

static struct {
	pthread_mutex_t lock;
	struct item *table[NKEYS];
} cache = { PTHREAD_MUTEX_INITIALIZER };
static long rounds;

__attribute__((noinline)) static struct item *item_alloc(int key, const char *val, int len)
{
	struct item *it = malloc(sizeof *it + len + 1);
	it->refcount = 0;
	it->linked = 0;
	it->key = key;
	it->nbytes = len + 1;
	for (int i = 0; i <= len; i++)
		it->data[i] = val[i];
	return it;
}

__attribute__((noinline)) static struct item *item_get(int key)
{
	pthread_mutex_lock(&cache.lock);
	struct item *it = cache.table[key]; /* @read: the current item ... */
	if (it)
		it->refcount++;
	pthread_mutex_unlock(&cache.lock);
	return it;
}

__attribute__((noinline)) static void item_remove(struct item *it)
{
	pthread_mutex_lock(&cache.lock);
	if (--it->refcount == 0 && !it->linked)
		free(it);
	pthread_mutex_unlock(&cache.lock);
}

static unsigned long parse(const char *s)
{
	unsigned long v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned long)(*s++ - '0');
	return v;
}

/* BUG: it was looked up in another critical section and may be stale. */
__attribute__((noinline)) static unsigned long add_delta(struct item *it, unsigned long delta)
{
	char buf[24];
	pthread_mutex_lock(&cache.lock);
	unsigned long v = parse(it->data) + delta;
	int len = snprintf(buf, sizeof buf, "%lu", v);
	if (len + 1 > it->nbytes) { /* one more digit: a new item replaces it */
		struct item *nit = item_alloc(it->key, buf, len);
		it->linked = 0;
		nit->linked = 1;
		cache.table[it->key] = nit; /* @write: ... replaced, unlinked or not */
	} else {
		for (int i = 0; i <= len; i++) /* in place */
			it->data[i] = buf[i];
	}
	pthread_mutex_unlock(&cache.lock);
	return v;
}

static void *client(void *arg)
{
	for (long i = 0; i < rounds; i++) {
		struct item *it = item_get(KEY_HITS);
		add_delta(it, DELTA);
		item_remove(it);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 9;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	struct item *it = item_alloc(KEY_HITS, "0", 1);
	it->linked = 1;
	cache.table[KEY_HITS] = it;

	pthread_t a, b;
	pthread_create(&a, NULL, client, (void *)0);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, client, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	it = item_get(KEY_HITS);
	unsigned long v = parse(it->data);
	item_remove(it);
	printf("hits %lu (expected %ld)\n", v, 2 * DELTA * rounds);
	if (v != (unsigned long)(2 * DELTA * rounds)) {
		fprintf(stderr, "incr_grow: lost increments: hits %lu, expected %ld\n", v, 2 * DELTA * rounds);
		return 1;
	}
	return 0;
}
