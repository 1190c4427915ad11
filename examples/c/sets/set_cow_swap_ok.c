/*
 * set_cow_swap_ok.c — copy-on-write configuration: the settings whose
 * fields belong together (a timeout and the retry count sized for it, and
 * their product, the request budget) live in an immutable struct. The
 * reloader builds a new struct privately and publishes it by swapping one
 * pointer under the lock; request threads take the pointer once under the
 * lock and read the fields of that snapshot without it. Old versions are
 * kept until the threads are joined. The fields are never written once
 * the struct is visible, and every reader sees one version of all of
 * them. Correct: nothing should be reported.
 * mcpredict:args 2 20
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct config {
	int timeout_ms;
	int retries;
	int budget_ms; /* timeout_ms * (retries + 1) */
};

static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct config *current;
static int nworkers, rounds;

static struct config *config_new(int timeout_ms, int retries)
{
	struct config *c = malloc(sizeof *c);
	c->timeout_ms = timeout_ms;
	c->retries = retries;
	c->budget_ms = timeout_ms * (retries + 1);
	return c;
}

/* Publishes c; returns the version it replaces. */
static struct config *config_swap(struct config *c)
{
	pthread_mutex_lock(&cfg_lock);
	struct config *old = current;
	current = c;
	pthread_mutex_unlock(&cfg_lock);
	return old;
}

static struct config *config_get(void)
{
	pthread_mutex_lock(&cfg_lock);
	struct config *c = current;
	pthread_mutex_unlock(&cfg_lock);
	return c;
}

static void *reloader(void *arg)
{
	struct config **retired = arg;
	for (int i = 0; i < rounds; i++)
		retired[i] = config_swap(config_new(100 + 10 * i, 1 + i % 4));
	return NULL;
}

static void *worker(void *arg)
{
	int bad = 0;
	for (int i = 0; i < rounds; i++) {
		const struct config *c = config_get();
		if (c->timeout_ms * (c->retries + 1) != c->budget_ms)
			bad++;
	}
	return (void *)(long)bad;
}

int main(int argc, char **argv)
{
	nworkers = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 20;
	current = config_new(100, 3);
	struct config **retired = calloc(rounds, sizeof *retired);
	pthread_t r, w[8];
	long bad = 0;
	pthread_create(&r, NULL, reloader, retired);
	for (long i = 0; i < nworkers; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (int i = 0; i < nworkers; i++) {
		void *b;
		pthread_join(w[i], &b);
		bad += (long)b;
	}
	pthread_join(r, NULL);
	for (int i = 0; i < rounds; i++)
		free(retired[i]);
	printf("timeout %d ms, %d retries, %ld inconsistent snapshots\n",
	       current->timeout_ms, current->retries, bad);
	free(current);
	free(retired);
	return 0;
}
