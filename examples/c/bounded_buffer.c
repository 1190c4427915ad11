/*
 * bounded_buffer.c — a small ring of mailboxes, each with a "full" flag,
 * that a producer and a consumer poll under one mutex, without condition
 * variables: every put and every get is its own short critical section,
 * retried with sched_yield() while the ring is full or empty. Correct:
 * nothing should be reported.
 *
 * More items than slots pass through the ring, so every slot is written
 * by the producer, read by the consumer, and written again for a later
 * item. Each slot's use is ordered by the mutex and the flag: the producer
 * writes a slot only when it found it empty (after the consumer's get
 * emptied it), the consumer reads it only when it found it full.
 *
 *   mcpredict cc -O1 -o bounded_buffer bounded_buffer.c
 *   mcpredict record -o bbuf.csv -- ./bounded_buffer 6
 *   mcpredict run bbuf.csv
 *
 * mcpredict:args 6
 * mcpredict:expect none
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 2

struct mailbox {
	int full; /* set by put, cleared by get */
	int value;
};

static struct ring {
	pthread_mutex_t lock;
	struct mailbox box[SLOTS];
	int put_at, get_at;
} ring = {.lock = PTHREAD_MUTEX_INITIALIZER};

static long received;

/* Returns 1 if v was stored, 0 if the ring is full. */
static int put(int v)
{
	int ok = 0;
	pthread_mutex_lock(&ring.lock);
	struct mailbox *m = &ring.box[ring.put_at];
	if (!m->full) {
		m->value = v;
		m->full = 1;
		ring.put_at = (ring.put_at + 1) % SLOTS;
		ok = 1;
	}
	pthread_mutex_unlock(&ring.lock);
	return ok;
}

/* Returns 1 and the oldest value in *v, or 0 if the ring is empty. */
static int get(int *v)
{
	int ok = 0;
	pthread_mutex_lock(&ring.lock);
	struct mailbox *m = &ring.box[ring.get_at];
	if (m->full) {
		*v = m->value;
		m->full = 0;
		ring.get_at = (ring.get_at + 1) % SLOTS;
		ok = 1;
	}
	pthread_mutex_unlock(&ring.lock);
	return ok;
}

static void *producer(void *arg)
{
	long n = (long)arg;
	for (int i = 1; i <= n; i++)
		while (!put(i))
			sched_yield();
	return NULL;
}

static void *consumer(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		int v;
		while (!get(&v))
			sched_yield();
		received += v;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 6;
	pthread_t p, c;
	pthread_create(&c, NULL, consumer, (void *)n);
	pthread_create(&p, NULL, producer, (void *)n);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("received %ld (expected %ld)\n", received, n * (n + 1) / 2);
	return 0;
}
