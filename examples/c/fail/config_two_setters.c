/*
 * config_two_setters.c — a configuration { mode, limit } that two admin
 * threads switch to the same new setting, each with switch_config(), which
 * sets the mode and then the limit in two critical sections of cfg_lock
 * (the mode's users are told in between); an auditor reads both
 * in one critical section and asserts that they belong together (mode 1
 * with limit 100, or mode 2 with limit 200). Bug: the auditor can read the
 * new mode with the old limit, between an admin's two steps (M5).
 *
 * The first admin switches; the second starts STAGGER µs later and
 * switches again (to the same values); the auditor starts STAGGER µs after
 * it: in the recorded run, no audit meets a switch halfway. (The two
 * admins' switches can interleave too, M3, harmless here: both write the
 * same values.) Holding the
 * first admin between its two steps is not enough: the second admin would
 * write both values before the audit, and the audit would pass. It must
 * wait too (reproduce holds such a bystander, writing what the held thread
 * wrote at the same code, until the audit has read).
 *
 * mcpredict:args 20000
 * mcpredict:expect M5|M6 cfg.mode+cfg.limit local:Write@mode local:Write@limit
 * mcpredict:allow M3|M4 cfg.mode+cfg.limit local:Write@mode local:Write@limit
 * mcpredict:reproduce failed
 * mcpredict:window switch_config@mode switch_config@limit
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

static _Atomic long notified;

/* noipa: the compiler may not assume it leaves cfg alone */
__attribute__((noipa)) static void notify_mode_users(int mode)
{
	notified += mode;
}

__attribute__((noinline)) static void switch_config(int mode, int limit)
{
	pthread_mutex_lock(&cfg_lock);
	cfg.mode = mode; /* @mode: BUG, the mode in one critical section ... */
	pthread_mutex_unlock(&cfg_lock);
	notify_mode_users(mode);
	pthread_mutex_lock(&cfg_lock);
	cfg.limit = limit; /* @limit: ... and its limit in another */
	pthread_mutex_unlock(&cfg_lock);
}

static void *admin(void *arg)
{
	usleep((useconds_t)(long)arg);
	switch_config(2, 200);
	return NULL;
}

static void *auditor(void *arg)
{
	usleep((useconds_t)(long)arg);
	pthread_mutex_lock(&cfg_lock);
	int mode = cfg.mode, limit = cfg.limit; /* @audit */
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
