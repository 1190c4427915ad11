/*
 * bounds_two_cs_log.c — a log buffer whose contents and length the logger
 * appends together under one lock (log_append() copies the record, moves
 * len and writes the terminating NUL in one critical section), and that a
 * status reporter serves as a response: log_len() for its Content-Length,
 * then log_copy() for its body, each in a critical section of its own.
 * Each read is locked; the pair is not: a record appended in between
 * makes the body longer than the length sent. Bug: torn read of len and
 * data (M1); the reporter checks the body against the length, and main
 * exits 1 when they differed.
 *
 * The reporter serves N responses, then the logger, started STAGGER µs
 * after it, appends N records: the recorded reporter reads only the
 * first record. Holding the reporter between log_len() and log_copy()
 * lets the logger append: the reporter copies data it never read in the
 * recorded run, and no order of the recorded events gives that value.
 *
 * mcpredict:args 5 20000
 * mcpredict:reproduce failed
 *   (through the boundaries relaxation: a P1 on lg.len whose window, between
 *   the length and the data, lets the logger append; the atomic-set
 *   inference does not pair lg.len with lg.data[15], which a region
 *   correlates with the last 8 variables it touched)
 * mcpredict:window log_len@getlen log_copy@getdata
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

__attribute__((noinline)) static int log_len(void)
{
	pthread_mutex_lock(&lg.lock);
	int n = lg.len; /* @getlen: BUG, the length read in one critical section ... */
	pthread_mutex_unlock(&lg.lock);
	return n;
}

__attribute__((noinline)) static int log_copy(char *out, int cap)
{
	int i;
	pthread_mutex_lock(&lg.lock);
	for (i = 0; i < cap - 1 && lg.data[i]; i++) /* @getdata: ... the data in another */
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
		int n = log_len(); /* Content-Length: n */
		int got = log_copy(body, sizeof body);
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
		fprintf(stderr, "bounds_two_cs_log: %ld responses whose body differs from their length\n", (long)torn);
		return 1;
	}
	return 0;
}
