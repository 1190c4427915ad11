/*
 * publish_unfilled.c — double-checked locking done wrong: get_config()
 * tests the singleton pointer without the lock and, when it is NULL, takes
 * the lock, tests it again, allocates the configuration, publishes the
 * pointer and only then fills the object in. A thread that tests the
 * pointer between the publication and the filling takes the fast path and
 * uses a configuration whose fields are still zero. Bug: a read of an
 * unfilled object (the writes of one critical section seen half done by
 * a thread that takes no lock); the readers check what they see, and
 * main exits 1 when one saw an unfilled configuration.
 *
 * Two readers each call get_config() N times; the second starts STAGGER µs
 * after the first, which has created and filled the configuration by
 * then, so the recorded run reads only filled fields. Holding the first
 * reader between the publication and config_fill() lets the second read
 * the zeroes: a value of the fields that no order of the recorded events
 * gives. mcpredict run still predicts it, as a publication: M5 on g_cfg
 * and g_cfg->magic, the field the readers read first and config_fill()
 * sets last, whose read of another value completes the pattern.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect M5 g_cfg local:Write@publish remote:Read@check
 * mcpredict:reproduce failed
 * mcpredict:window get_config@publish config_fill@fill
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
	c->nworkers = 4; /* @fill: ... before it is filled */
	c->port = 11211;
	for (int i = 0; name[i]; i++)
		c->name[i] = name[i];
	c->magic = CFG_MAGIC;
}

__attribute__((noinline)) static struct config *get_config(void)
{
	if (!g_cfg) { /* @check: BUG, tested without the lock */
		pthread_mutex_lock(&cfg_lock);
		if (!g_cfg) {
			struct config *c = calloc(1, sizeof *c);
			g_cfg = c; /* @publish: BUG, the object is published ... */
			config_fill(c);
		}
		pthread_mutex_unlock(&cfg_lock);
	}
	return g_cfg;
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
		fprintf(stderr, "publish_unfilled: a reader saw an unfilled configuration (%ld, %ld times)\n",
			ra.unfilled, rb.unfilled);
		return 1;
	}
	return 0;
}
