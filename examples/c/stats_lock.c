/*
 * stats_lock.c — request handlers keep statistics under a stats lock:
 * requests in progress (up when a request starts, down when it ends),
 * requests served and bytes sent, through a helper that adds to a counter
 * (a function call at -O1). The statistics are right; the bug is the
 * backlog of the output queue, read in one critical section and written
 * back in the next. The second request arrives 20 ms later: the recorded
 * run loses nothing, and only the statistics order the two requests.
 * Bug: lost update (P3) of backlog.
 *
 * mcpredict:expect P3 backlog local:Read@read remote:Write@write local:Write@write
 * mcpredict:notexhibited backlog
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static struct stats {
	pthread_mutex_t lock;
	long active, served, bytes;
} stats = { PTHREAD_MUTEX_INITIALIZER };

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static long backlog;

/* Adds n to a statistic; the caller holds stats.lock. */
static __attribute__((noinline)) void stat_add(long *c, long n)
{
	*c += n;
}

static void *handler(void *arg)
{
	long len = (long)arg;
	if (len > 1000)
		usleep(20000);
	pthread_mutex_lock(&stats.lock);
	stat_add(&stats.active, 1);
	pthread_mutex_unlock(&stats.lock);

	/* Queue the reply: the backlog is read and written in two sections. */
	pthread_mutex_lock(&out_lock);
	long q = backlog; /* @read */
	pthread_mutex_unlock(&out_lock);
	pthread_mutex_lock(&out_lock);
	backlog = q + len; /* @write */
	pthread_mutex_unlock(&out_lock);

	pthread_mutex_lock(&stats.lock);
	stat_add(&stats.active, -1);
	stat_add(&stats.served, 1);
	stat_add(&stats.bytes, len);
	pthread_mutex_unlock(&stats.lock);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, handler, (void *)700);
	pthread_create(&b, NULL, handler, (void *)1500);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("backlog %ld, %ld served, %ld bytes\n", backlog, stats.served, stats.bytes);
	return 0;
}
