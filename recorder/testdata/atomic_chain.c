/*
 * atomic_chain.c — the orders the recorder gives atomic operations.
 *
 * Three workers each write their slot, then count themselves done with a
 * release fetch-and-add on `done` (a chain of read-modify-writes); main
 * spins on an acquire load of `done` until it sees 3 and reads the slots.
 * The load that sees 3 reads the end of the chain and acquires every
 * worker's release (its release sequence): Waits on atomic:done and
 * atomic:done@<worker>. The increments themselves order nothing: each
 * reads another read-modify-write. A flag published with a release store
 * (`go`) and read with an acquire load orders the load after the store.
 */
#include <pthread.h>
#include <stdio.h>

static long slot[3];
static int done;
static int go;

static void *worker(void *arg)
{
	long id = (long)arg;
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) /* @go-load */
		;
	slot[id] = id * 10;
	__atomic_fetch_add(&done, 1, __ATOMIC_ACQ_REL); /* @count */
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE); /* @go-store */
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < 3) /* @done-load */
		;
	long s = slot[0] + slot[1] + slot[2];
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", s);
	return 0;
}
