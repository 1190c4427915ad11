/*
 * cas_counter_ok.c — counters updated by compare-and-swap loops, as APR's
 * apr_atomic_inc32 and httpd's idler count do: read the value plainly,
 * compute the new one, and swap it in only if the value is still the one
 * read; otherwise read again. No update is lost: a CAS that succeeds wrote
 * from the value it compared with.
 *
 * The second thread starts after the first has finished (the stagger), so
 * the recorded run has no interleaving; the threads of the model do.
 *
 * mcpredict:args 200 20000
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned served;    /* read plainly, swapped with a CAS */
static unsigned long peak; /* a maximum, raised with a CAS */

__attribute__((noinline)) static unsigned cas32(unsigned *mem, unsigned with, unsigned cmp)
{
	return __sync_val_compare_and_swap(mem, cmp, with);
}

__attribute__((noinline)) static void count_served(void)
{
	unsigned old;
	do {
		old = served;
	} while (cas32(&served, old + 1, old) != old);
}

__attribute__((noinline)) static void raise_peak(unsigned long v)
{
	unsigned long cur = peak;
	while (cur < v && !__atomic_compare_exchange_n(&peak, &cur, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

static void *worker(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		count_served();
		raise_peak((unsigned long)i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t a, b;
	pthread_create(&a, NULL, worker, (void *)n);
	usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	pthread_create(&b, NULL, worker, (void *)n);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (served != 2 * (unsigned)n) {
		fprintf(stderr, "lost an update: %u, want %ld\n", served, 2 * n);
		return 1;
	}
	printf("served %u, peak %lu\n", served, peak);
	return 0;
}
