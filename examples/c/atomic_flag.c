/*
 * atomic_flag.c — data published through a C11 atomic flag, and a
 * reference count kept with atomic read-modify-writes. Correct: nothing
 * should be reported.
 *
 * The recorder models a release store as a Signal and an acquire load as
 * a Wait on the atomic's address, so the reader's accesses to message are
 * ordered after the writer's, and the atomics themselves are
 * synchronisation, never shared data.
 *
 *   mcpredict cc -O1 -o atomic_flag atomic_flag.c
 *   mcpredict record -o atomic.csv -- ./atomic_flag
 *   mcpredict run atomic.csv
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static struct {
	int len;
	char text[16];
} message;
static atomic_int ready;
static atomic_long refs = 1;

static void *writer(void *arg)
{
	(void)arg;
	atomic_fetch_add(&refs, 1);
	message.len = 0;
	message.text[0] = 'h';
	message.text[1] = 'i';
	message.len = 2;
	atomic_store_explicit(&ready, 1, memory_order_release);
	atomic_fetch_sub(&refs, 1);
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	atomic_fetch_add(&refs, 1);
	while (!atomic_load_explicit(&ready, memory_order_acquire))
		;
	int len = message.len;
	char first = message.text[0];
	atomic_fetch_sub(&refs, 1);
	printf("read %d bytes, first '%c'\n", len, first);
	return NULL;
}

int main(void)
{
	pthread_t w, r;
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	printf("refs %ld\n", atomic_load(&refs));
	return 0;
}
