/*
 * set_cache_kv.c — a one-entry memo cache { key, value } in front of an
 * expensive function. Workers look the key up, read the value on a hit,
 * and on a miss compute it and store key and value, each access through a
 * helper that takes the cache lock. Each field is locked; the pair is not:
 * a worker can match its key and then read the value another worker stored
 * for a different key (M1), find a key whose value is not stored yet (M5),
 * or two stores can interleave and leave one key with the other's value
 * (M3). Bug: torn read, half-done update read, torn update. The miss path
 * is also a check-then-act on the key alone (P3: another worker stores its
 * key between the lookup and the store, and loses it), allowed.
 * mcpredict:args 2 24
 * mcpredict:expect M1|M2 cache.key+cache.value local:Read@haskey local:Read@getvalue
 * mcpredict:expect M5|M6 cache.key+cache.value local:Write@setkey local:Write@setvalue
 * mcpredict:expect M3|M4 cache.key+cache.value local:Write@setkey local:Write@setvalue
 * mcpredict:allow P3 cache.key local:Read@haskey local:Write@setkey
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int key;
	long value;
} cache = { -1, 0 };
static int nthreads, rounds;
static int wrong;

static __attribute__((noinline)) long expensive(int k)
{
	long v = 0;
	for (int i = 0; i < k; i++)
		v += 2 * i + 1;
	return v; /* k * k */
}

static int cache_has(int key)
{
	pthread_mutex_lock(&cache_lock);
	int hit = cache.key == key; /* @haskey */
	pthread_mutex_unlock(&cache_lock);
	return hit;
}

static long cache_value(void)
{
	pthread_mutex_lock(&cache_lock);
	long v = cache.value; /* @getvalue */
	pthread_mutex_unlock(&cache_lock);
	return v;
}

static void cache_store(int key, long value)
{
	pthread_mutex_lock(&cache_lock);
	cache.key = key; /* @setkey */
	pthread_mutex_unlock(&cache_lock);
	pthread_mutex_lock(&cache_lock);
	cache.value = value; /* @setvalue */
	pthread_mutex_unlock(&cache_lock);
}

static long square(int k)
{
	if (cache_has(k))
		return cache_value();
	long v = expensive(k);
	cache_store(k, v);
	return v;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < rounds; i++) {
		int k = 10 + (i + id) / 3;
		if (square(k) != (long)k * k)
			wrong++;
		usleep(20); /* the next request */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nthreads = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 24;
	pthread_t t[8];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("%d wrong results\n", wrong);
	return 0;
}
