/*
 * incr_grow_ok.c — the item cache of incr_grow.c with memcached 1.4.5's
 * fix: add_delta() looks the item up itself, in the critical section that
 * computes the new value and replaces the item when it needs one more
 * digit. No client can work on an item another client has replaced, so
 * no increment is lost. Correct.
 *
 * mcpredict:args 9 20000
 * mcpredict:reproduce clean
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
	struct item *it = cache.table[key];
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

/* The lookup and the update in one critical section. */
__attribute__((noinline)) static unsigned long add_delta(int key, unsigned long delta)
{
	char buf[24];
	pthread_mutex_lock(&cache.lock);
	struct item *it = cache.table[key]; /* @read */
	unsigned long v = parse(it->data) + delta;
	int len = snprintf(buf, sizeof buf, "%lu", v);
	if (len + 1 > it->nbytes) { /* one more digit: a new item replaces it */
		struct item *nit = item_alloc(it->key, buf, len);
		it->linked = 0;
		nit->linked = 1;
		cache.table[it->key] = nit; /* @write */
		if (it->refcount == 0)
			free(it);
	} else {
		for (int i = 0; i <= len; i++) /* in place */
			it->data[i] = buf[i];
	}
	pthread_mutex_unlock(&cache.lock);
	return v;
}

static void *client(void *arg)
{
	for (long i = 0; i < rounds; i++)
		add_delta(KEY_HITS, DELTA);
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
		fprintf(stderr, "incr_grow_ok: lost increments: hits %lu, expected %ld\n", v, 2 * DELTA * rounds);
		return 1;
	}
	return 0;
}
