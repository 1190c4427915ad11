/*
 * atomic_helper_cleanup.c — cache entries whose reference counts are
 * changed by an "atomic" add built on a spinlock (a function call that
 * returns nothing), and released as Apache's mod_mem_cache did before the
 * fix of bug 21287: decrement_refcount() subtracts 1 and then tests the
 * count plainly (if (!e->refcount)) to clean the entry up. If another
 * release falls between the subtraction and the test, both see 0 and the
 * entry's buffer is freed twice. The second release comes 20 ms later, so
 * the recorded run cleans up once. Bug: the plain test sees another
 * thread's decrement (P2, or P1 with the helper's read) on
 * entries[0].refcount.
 *
 * mcpredict:expect P2|P1 entries[0].refcount remote:Write@sub local:Read@test
 * mcpredict:notexhibited entries[0].refcount
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_spinlock_t atomic_lock;

static __attribute__((noinline)) void atomic_add(long *p, long n)
{
	pthread_spin_lock(&atomic_lock);
	*p += n; /* @sub */
	pthread_spin_unlock(&atomic_lock);
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
	atomic_add(&e->refcount, -1);
	if (!e->refcount) /* @test */
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
