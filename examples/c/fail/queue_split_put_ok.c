/*
 * queue_split_put_ok.c — the ring queue of queue_split_put.c with q_put()
 * reserving the slot and storing the item in one critical section: the
 * consumer never reaches a reserved slot that is not filled. Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect none
 * mcpredict:reproduce clean
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CAP 64

struct queue {
	pthread_mutex_t lock;
	unsigned head, tail;
	long buf[CAP];
};

struct queue q = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {0}};
static long nitems;

__attribute__((noinline)) static void q_put(struct queue *qu, long v)
{
	pthread_mutex_lock(&qu->lock);
	unsigned slot = qu->tail++ % CAP; /* @reserve */
	qu->buf[slot] = v;                /* @fill */
	pthread_mutex_unlock(&qu->lock);
}

__attribute__((noinline)) static long q_get(struct queue *qu)
{
	for (;;) {
		pthread_mutex_lock(&qu->lock);
		if (qu->head != qu->tail) {
			unsigned slot = qu->head++ % CAP;
			long v = qu->buf[slot]; /* @take */
			qu->buf[slot] = 0;
			pthread_mutex_unlock(&qu->lock);
			return v;
		}
		pthread_mutex_unlock(&qu->lock);
		usleep(100); /* empty: wait for the producer */
	}
}

static void *producer(void *arg)
{
	for (long i = 1; i <= nitems; i++)
		q_put(&q, i);
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;
	for (long i = 0; i < nitems; i++) {
		long v = q_get(&q);
		assert(v != 0); /* every item put is non-zero */
		sum += v;
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	nitems = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	if (nitems > CAP)
		nitems = CAP;
	pthread_t p, c;
	pthread_create(&p, NULL, producer, NULL);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&c, NULL, consumer, NULL);
	void *sum;
	pthread_join(p, NULL);
	pthread_join(c, &sum);
	printf("consumed %ld\n", (long)sum);
	assert((long)sum == nitems * (nitems + 1) / 2);
	return 0;
}
