/*
 * churn.c — many short threads, for the stack registry: main gives each
 * a slot of an array on its stack; each worker gives a struct on its own
 * stack to a helper thread it joins. Stacks are reused by later threads
 * (glibc caches them). Prints the total.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 8

struct box {
	pthread_mutex_t lock;
	long value;
};

static void *helper(void *arg)
{
	struct box *b = arg;
	pthread_mutex_lock(&b->lock);
	b->value += 2; /* @helper */
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static void *worker(void *arg)
{
	long *slot = arg;
	struct box mine = {PTHREAD_MUTEX_INITIALIZER, 1};
	pthread_t h;
	pthread_create(&h, NULL, helper, &mine);
	pthread_mutex_lock(&mine.lock);
	mine.value *= 3; /* @worker */
	pthread_mutex_unlock(&mine.lock);
	pthread_join(h, NULL);
	*slot += mine.value; /* @slot */
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 8;
	long slots[BATCH] = {0};
	for (int r = 0; r < rounds; r++) {
		pthread_t t[BATCH];
		for (int i = 0; i < BATCH; i++)
			pthread_create(&t[i], NULL, worker, &slots[i]);
		for (int i = 0; i < BATCH; i++)
			pthread_join(t[i], NULL);
	}
	long total = 0;
	for (int i = 0; i < BATCH; i++)
		total += slots[i];
	printf("total %ld\n", total);
	return 0;
}
