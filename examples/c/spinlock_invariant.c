/*
 * spinlock_invariant.c — a queue's head/count kept consistent under a
 * pthread spinlock, with a reader computing statistics under the same
 * spinlock. Correct.
 * mcpredict:args 3 200
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_spinlock_t sl;
static struct { int head, tail, count; int buf[16]; } ring;
static int rounds;

static void *producer(void *a)
{
	for (int i = 0; i < rounds; i++) {
		pthread_spin_lock(&sl);
		if (ring.count < 16) {
			ring.buf[ring.tail] = i;
			ring.tail = (ring.tail + 1) % 16;
			ring.count++;
		}
		pthread_spin_unlock(&sl);
	}
	return NULL;
}

static void *consumer(void *a)
{
	long s = 0;
	for (int i = 0; i < rounds; i++) {
		pthread_spin_lock(&sl);
		if (ring.count > 0) {
			s += ring.buf[ring.head];
			ring.head = (ring.head + 1) % 16;
			ring.count--;
		}
		pthread_spin_unlock(&sl);
	}
	return (void *)s;
}

int main(int argc, char **argv)
{
	rounds = argc > 2 ? atoi(argv[2]) : 200;
	pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE);
	pthread_t p, c;
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("%d\n", ring.count);
	return 0;
}
