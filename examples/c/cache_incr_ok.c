/*
 * cache_incr_ok.c — an object cache whose get()/put() count references
 * under the cache lock; a client increments the value in one critical
 * section. Two clients, the second 20 ms later. The twin of cache_incr.c.
 * Correct: nothing should be reported.
 *
 * mcpredict:args 2
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct obj { int refs; long value; };
static struct { pthread_mutex_t lock; struct obj *obj; long hits; } cache = { PTHREAD_MUTEX_INITIALIZER };

static struct obj *get(void)
{
	pthread_mutex_lock(&cache.lock);
	struct obj *o = cache.obj;
	o->refs++;
	cache.hits++;
	pthread_mutex_unlock(&cache.lock);
	return o;
}

static void put(struct obj *o)
{
	pthread_mutex_lock(&cache.lock);
	if (--o->refs == 0)
		free(o);
	pthread_mutex_unlock(&cache.lock);
}

static void *client(void *arg)
{
	if (arg)
		usleep(20000);
	struct obj *o = get();
	pthread_mutex_lock(&cache.lock);
	o->value = o->value + 1;
	pthread_mutex_unlock(&cache.lock);
	put(o);
	return NULL;
}

int main(void)
{
	cache.obj = calloc(1, sizeof *cache.obj);
	cache.obj->refs = 1;
	pthread_t a, b;
	pthread_create(&a, NULL, client, NULL);
	pthread_create(&b, NULL, client, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld\n", cache.obj->value);
	return 0;
}
