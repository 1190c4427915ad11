/*
 * sem_pipeline.c — three-stage pipeline over a ring of slots, handed on with
 * POSIX semaphores. Correct.
 * mcpredict:args 200
 * mcpredict:expect none
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4
struct item { int id; long val; long sq; };
static struct item ring[N];
static sem_t empty, mid, full;
static int count;

static void *produce(void *a)
{
	for (int i = 0; i < count; i++) {
		sem_wait(&empty);
		struct item *it = &ring[i % N];
		it->id = i;
		it->val = i * 3;
		sem_post(&mid);
	}
	return NULL;
}

static void *square(void *a)
{
	for (int i = 0; i < count; i++) {
		sem_wait(&mid);
		struct item *it = &ring[i % N];
		it->sq = it->val * it->val;
		it->val = it->val + 1;
		sem_post(&full);
	}
	return NULL;
}

static long total;
static void *consume(void *a)
{
	for (int i = 0; i < count; i++) {
		sem_wait(&full);
		struct item *it = &ring[i % N];
		total += it->sq + it->val + it->id;
		sem_post(&empty);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	count = argc > 1 ? atoi(argv[1]) : 100;
	sem_init(&empty, 0, N);
	sem_init(&mid, 0, 0);
	sem_init(&full, 0, 0);
	pthread_t t[3];
	pthread_create(&t[0], NULL, produce, NULL);
	pthread_create(&t[1], NULL, square, NULL);
	pthread_create(&t[2], NULL, consume, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", total);
	return 0;
}
