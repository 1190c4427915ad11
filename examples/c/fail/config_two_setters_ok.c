/*
 * config_two_setters_ok.c — the twin of config_two_setters.c: the two
 * admin threads switch the configuration with set_config(), the mode and
 * its limit in one critical section of cfg_lock; the auditor reads both
 * in one and asserts they belong together. It never fails.
 *
 * mcpredict:args 20000
 * mcpredict:expect none
 * mcpredict:reproduce clean
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int mode;
	int limit;
} cfg = { 1, 100 };
static long stagger;

__attribute__((noinline)) static void set_config(int mode, int limit)
{
	pthread_mutex_lock(&cfg_lock);
	cfg.mode = mode;
	cfg.limit = limit;
	pthread_mutex_unlock(&cfg_lock);
}

static void *admin(void *arg)
{
	usleep((useconds_t)(long)arg);
	set_config(2, 200);
	return NULL;
}

static void *auditor(void *arg)
{
	usleep((useconds_t)(long)arg);
	pthread_mutex_lock(&cfg_lock);
	int mode = cfg.mode, limit = cfg.limit;
	pthread_mutex_unlock(&cfg_lock);
	assert((mode == 1 && limit == 100) || (mode == 2 && limit == 200));
	return NULL;
}

int main(int argc, char **argv)
{
	stagger = argc > 1 ? atol(argv[1]) : 20000;
	pthread_t a1, a2, au;
	pthread_create(&a1, NULL, admin, (void *)0L);
	pthread_create(&a2, NULL, admin, (void *)stagger);
	pthread_create(&au, NULL, auditor, (void *)(2 * stagger));
	pthread_join(a1, NULL);
	pthread_join(a2, NULL);
	pthread_join(au, NULL);
	printf("mode %d, limit %d\n", cfg.mode, cfg.limit);
	return 0;
}
