/*
 * once_init.c — lazy initialisation of a configuration with pthread_once;
 * the threads start together at a barrier and all race to the first
 * get_config(), then read the configuration's fields. Correct.
 * mcpredict:args 4
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct config { int workers; int depth; char name[16]; };
static struct config *cfg;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_config(void)
{
	struct config *c = malloc(sizeof *c);
	c->workers = 4;
	c->depth = 3;
	snprintf(c->name, sizeof c->name, "cfg");
	cfg = c;
}

static struct config *get_config(void)
{
	pthread_once(&once, init_config);
	return cfg;
}

static long sums[16];
static pthread_barrier_t start;
static void *work(void *a)
{
	long id = (long)a;
	pthread_barrier_wait(&start); /* every thread races to the first get_config */
	for (int i = 0; i < 50; i++) {
		struct config *c = get_config();
		sums[id] += c->workers * c->depth + get_config()->name[0];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[16];
	pthread_barrier_init(&start, NULL, n);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	long s = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		s += sums[i];
	}
	printf("%ld %d\n", s, get_config()->workers);
	return 0;
}
