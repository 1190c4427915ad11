/*
 * queue_split_put.c — a ring queue whose q_put() reserves a slot (tail++)
 * in one critical section and stores the item in the next, so that the
 * copy is made outside the lock. q_get() is locked whole: it waits for
 * head != tail, takes the item at head and clears the slot. A consumer
 * that reaches a reserved slot before it is filled takes an empty item.
 * Bug: a half-done put seen by the consumer, whose assertion that every
 * item is non-zero fails (SIGABRT) in the consumer, not in the producer.
 *
 * The producer puts N items; the consumer starts STAGGER µs later and
 * gets them: the recorded consumer finds every slot filled. Holding the
 * producer between its reservation and its store, at any item, lets the
 * consumer reach the empty slot.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect none
 * mcpredict:reproduce failed
 * mcpredict:window q_put@reserve q_put@fill
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
	unsigned slot = qu->tail++ % CAP; /* @reserve: BUG, the slot reserved in one critical section ... */
	pthread_mutex_unlock(&qu->lock);
	pthread_mutex_lock(&qu->lock);
	qu->buf[slot] = v; /* @fill: ... and filled in another */
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
