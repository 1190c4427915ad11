/*
 * publish_unfilled_ok.c — the configuration of publish_unfilled.c with
 * get_config() taking the lock on every call: the pointer is still
 * published before the object is filled, but inside the critical section
 * that fills it, and no reader tests the pointer without the lock, so none
 * sees the object before it is filled. Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:reproduce clean
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CFG_MAGIC 0x43464721

struct config {
	int magic;
	int nworkers;
	int port;
	char name[16];
};

static struct config *g_cfg;
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static long rounds;

__attribute__((noinline)) static void config_fill(struct config *c)
{
	static const char name[] = "counterd";
	c->nworkers = 4; /* @fill */
	c->port = 11211;
	for (int i = 0; name[i]; i++)
		c->name[i] = name[i];
	c->magic = CFG_MAGIC;
}

__attribute__((noinline)) static struct config *get_config(void)
{
	pthread_mutex_lock(&cfg_lock);
	if (!g_cfg) { /* @check */
		struct config *n = calloc(1, sizeof *n);
		g_cfg = n; /* @publish */
		config_fill(n);
	}
	struct config *c = g_cfg;
	pthread_mutex_unlock(&cfg_lock);
	return c;
}

struct result { long unfilled, sum; };

static void *reader(void *arg)
{
	struct result *r = arg;
	for (long i = 0; i < rounds; i++) {
		struct config *c = get_config();
		if (c->magic != CFG_MAGIC || c->nworkers == 0 || c->name[0] == 0) {
			r->unfilled++;
			continue;
		}
		r->sum += c->port / c->nworkers;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	struct result ra = { 0, 0 }, rb = { 0, 0 };
	pthread_t a, b;
	pthread_create(&a, NULL, reader, &ra);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, reader, &rb);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("sums %ld %ld\n", ra.sum, rb.sum);
	if (ra.unfilled || rb.unfilled) {
		fprintf(stderr, "publish_unfilled_ok: a reader saw an unfilled configuration (%ld, %ld times)\n",
			ra.unfilled, rb.unfilled);
		return 1;
	}
	return 0;
}
