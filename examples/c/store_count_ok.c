/*
 * store_count_ok.c — the store manager of store_count.c with the count
 * kept under the manager's lock, with the list it counts. No race, every
 * function atomic: the multi-lockset detector, the reduction-based and
 * the commit-node checkers report nothing.
 *
 * mcpredict:args 20 20000
 * mcpredict:expect none
 * mcpredict:reports lockset none
 * mcpredict:reports reduction none
 * mcpredict:reports commitnode none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct store {
	int id;
	struct store *next;
};

static pthread_mutex_t mgr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct store *stores;
static long loaded_store;
static struct store pool[2][4];
static int rounds;
static long stagger;

static __attribute__((noinline)) void load_store(struct store *s)
{
	pthread_mutex_lock(&mgr_lock);
	s->next = stores;
	stores = s;
	loaded_store++;
	pthread_mutex_unlock(&mgr_lock);
}

static __attribute__((noinline)) void unload_store(void)
{
	pthread_mutex_lock(&mgr_lock);
	struct store *s = stores;
	if (s) {
		stores = s->next;
		loaded_store--;
	}
	pthread_mutex_unlock(&mgr_lock);
}

static void *worker(void *arg)
{
	long w = (long)arg;
	if (w > 0)
		usleep((useconds_t)stagger);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 4; i++)
			load_store(&pool[w][i]);
		for (int i = 0; i < 4; i++)
			unload_store();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 20;
	stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t t[2];
	for (long w = 0; w < 2; w++)
		pthread_create(&t[w], NULL, worker, (void *)w);
	for (int w = 0; w < 2; w++)
		pthread_join(t[w], NULL);
	printf("loaded %ld (expected 0)\n", loaded_store);
	return 0;
}
