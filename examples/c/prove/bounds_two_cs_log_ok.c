/*
 * bounds_two_cs_log_ok.c — the log buffer of bounds_two_cs_log.c served
 * from one critical section: log_snapshot() reads the length and copies
 * the data without letting go of the lock, so the length sent always
 * matches the body. Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:reproduce clean
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LOGSZ 512

static struct {
	pthread_mutex_t lock;
	int len; /* bytes in data, before its NUL */
	char data[LOGSZ];
} lg = { PTHREAD_MUTEX_INITIALIZER };
static long rounds;

__attribute__((noinline)) static void log_append(const char *rec)
{
	int n = 0;
	while (rec[n])
		n++;
	pthread_mutex_lock(&lg.lock);
	if (lg.len + n >= LOGSZ) /* full: start again */
		lg.len = 0;
	for (int i = 0; i < n; i++)
		lg.data[lg.len + i] = rec[i]; /* @setdata */
	lg.len += n;                      /* @setlen */
	lg.data[lg.len] = 0;
	pthread_mutex_unlock(&lg.lock);
}

__attribute__((noinline)) static int log_snapshot(char *out, int cap, int *len)
{
	int i;
	pthread_mutex_lock(&lg.lock);
	*len = lg.len; /* @getlen */
	for (i = 0; i < cap - 1 && lg.data[i]; i++) /* @getdata */
		out[i] = lg.data[i];
	out[i] = 0;
	pthread_mutex_unlock(&lg.lock);
	return i;
}

static void *reporter(void *arg)
{
	char body[LOGSZ];
	long torn = 0;
	for (long i = 0; i < rounds; i++) {
		int n; /* Content-Length: n */
		int got = log_snapshot(body, sizeof body, &n);
		if (got != n)
			torn++;
	}
	return (void *)torn;
}

static void *logger(void *arg)
{
	char rec[32];
	for (int i = 1; i <= rounds; i++) {
		snprintf(rec, sizeof rec, "GET /item/%d 200\n", i);
		log_append(rec);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	log_append("server started\n");
	pthread_t r, l;
	pthread_create(&r, NULL, reporter, NULL);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&l, NULL, logger, NULL);
	void *torn;
	pthread_join(r, &torn);
	pthread_join(l, NULL);
	printf("log: %d bytes\n", lg.len);
	if (torn) {
		fprintf(stderr, "bounds_two_cs_log_ok: %ld responses whose body differs from their length\n", (long)torn);
		return 1;
	}
	return 0;
}
