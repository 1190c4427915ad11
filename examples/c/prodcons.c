/*
 * prodcons.c — a bounded buffer with a mutex and two condition variables.
 * Correct: nothing should be reported.
 *
 * The "while (count == 0) pthread_cond_wait(...)" loops read count before
 * and after waiting; the wait is where the other thread is expected to
 * change it, so the reads are not one atomic region (DESIGN §3, region
 * boundaries) and are not reported as an unrepeatable read.
 *
 *   mcpredict cc -O1 -o prodcons prodcons.c
 * With a stagger (second argument, microseconds) the producer starts late
 * and the consumer is sure to wait.
 *
 *   mcpredict record -o prodcons.csv -- ./prodcons 1 20000
 *   mcpredict run prodcons.csv
 *
 * Several items, so that the ring reuses its slots: a slot read by one
 * get() and written again for a later item is not a violation either.
 * mcpredict:args 5 20000
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 4

static int items[SLOTS];
static int head, tail, count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static long total;

static void *producer(void *arg)
{
	long n = (long)arg;
	for (long i = 1; i <= n; i++) {
		pthread_mutex_lock(&lock);
		while (count == SLOTS)
			pthread_cond_wait(&not_full, &lock);
		items[tail] = (int)i;
		tail = (tail + 1) % SLOTS;
		count++;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		while (count == 0)
			pthread_cond_wait(&not_empty, &lock);
		total += items[head];
		head = (head + 1) % SLOTS;
		count--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 8;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t p, c;
	pthread_create(&c, NULL, consumer, (void *)n);
	if (stagger > 0)
		usleep((useconds_t)stagger);
	pthread_create(&p, NULL, producer, (void *)n);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("total %ld (expected %ld)\n", total, n * (n + 1) / 2);
	return 0;
}
