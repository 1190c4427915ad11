/*
 * store_count.c — a resource store manager that keeps its loaded stores
 * in a list under a lock but counts them without it, after the bug that
 * Wang's dissertation found in the Jigsaw web server (§7.5:
 * ResourceStoreManager.loadedStore++ and loadedStore-- without
 * synchronization). Two threads load and unload stores; an increment and
 * a decrement that overlap lose one of them. Bug: a data race and a lost
 * update (P3) of loaded_store; the multi-lockset detector reports the
 * race, the reduction-based and commit-node checkers load_store and
 * unload_store.
 *
 * The second thread starts 20 ms later: the recorded run loses nothing.
 *
 *   mcpredict cc -O1 -o store_count store_count.c
 *   mcpredict record -o sc.csv -- ./store_count 20 20000
 *   mcpredict run --analysis lockset,reduction,commitnode sc.csv
 *
 * mcpredict:args 20 20000
 * mcpredict:expect P3|P5 loaded_store local:Read@inc local:Write@inc
 * mcpredict:expect P3|P5 loaded_store local:Read@dec local:Write@dec
 * mcpredict:notexhibited loaded_store
 * mcpredict:reports lockset race
 * mcpredict:reports reduction race-cs
 * mcpredict:reports commitnode view
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
static struct store *stores; /* the loaded stores, under mgr_lock */
static long loaded_store;    /* BUG: their number, without the lock */
static struct store pool[2][4];
static int rounds;
static long stagger;

static __attribute__((noinline)) void load_store(struct store *s)
{
	pthread_mutex_lock(&mgr_lock);
	s->next = stores;
	stores = s;
	pthread_mutex_unlock(&mgr_lock);
	loaded_store++; /* @inc */
}

static __attribute__((noinline)) void unload_store(void)
{
	pthread_mutex_lock(&mgr_lock);
	struct store *s = stores;
	if (s)
		stores = s->next;
	pthread_mutex_unlock(&mgr_lock);
	if (s)
		loaded_store--; /* @dec */
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
