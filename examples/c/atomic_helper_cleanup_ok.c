/*
 * atomic_helper_cleanup_ok.c — cache entries whose reference counts are
 * changed by an "atomic" add built on a spinlock (a function call that
 * returns the new value), released as Apache's mod_mem_cache does after
 * the fix of bug 21287: decrement_refcount() cleans the entry up when the
 * value its own subtraction left is 0. The twin of atomic_helper_cleanup.c
 * (the second release comes 20 ms later). Correct: nothing should be
 * reported.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_spinlock_t atomic_lock;

static __attribute__((noinline)) long atomic_add(long *p, long n)
{
	pthread_spin_lock(&atomic_lock);
	long v = *p += n;
	pthread_spin_unlock(&atomic_lock);
	return v;
}

struct entry { long refcount; char *buf; };
static struct entry entries[4];

static void cleanup(struct entry *e)
{
	free(e->buf);
	e->buf = NULL;
}

static void decrement_refcount(struct entry *e)
{
	if (!atomic_add(&e->refcount, -1))
		cleanup(e);
}

static void *request(void *arg)
{
	usleep((long)arg);
	decrement_refcount(&entries[0]);
	return NULL;
}

int main(void)
{
	pthread_spin_init(&atomic_lock, PTHREAD_PROCESS_PRIVATE);
	entries[0].buf = malloc(128);
	atomic_add(&entries[0].refcount, 2); /* the two requests' references */
	pthread_t a, b;
	pthread_create(&a, NULL, request, (void *)0);
	pthread_create(&b, NULL, request, (void *)20000);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	puts(entries[0].buf ? "entry live" : "entry cleaned up");
	return 0;
}
