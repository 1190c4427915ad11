/*
 * init_before_create.c — configuration written by main before it creates
 * the threads, read by them and by main while they run, and changed by
 * main only after joining them. Correct: nothing should be reported.
 *
 * pthread_create orders everything main wrote before it before the new
 * thread's first step, and pthread_join orders the thread's last step
 * before everything main does after it. While the workers run, main only
 * reads the configuration (it prints it and does a share of the work), so
 * a value read twice cannot change in between; the workers write only
 * their own result slot and a counter under a mutex. After the join main
 * changes the configuration and runs a second, single-threaded pass.
 *
 *   mcpredict cc -O1 -o init_before_create init_before_create.c
 *   mcpredict record -o init.csv -- ./init_before_create 2 4
 *   mcpredict run init.csv
 *
 * mcpredict:args 2 4
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXTHREADS 8

static struct config {
	const char *name;
	int workers;
	int chunk;
	long modulus;
	int verbose;
} cfg;

static long results[MAXTHREADS + 1];
static int progress_lines;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void work(int id)
{
	long r = 0;
	for (int i = 0; i < cfg.chunk; i++)
		r += (long)(id * cfg.chunk + i) * 7919 % cfg.modulus;
	results[id] = r;
	if (cfg.verbose) {
		pthread_mutex_lock(&log_lock);
		progress_lines++;
		pthread_mutex_unlock(&log_lock);
	}
}

static void *worker(void *arg)
{
	work((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	cfg.name = "init";
	cfg.workers = argc > 1 ? atoi(argv[1]) : 2;
	cfg.chunk = argc > 2 ? atoi(argv[2]) : 4;
	cfg.modulus = 1000;
	cfg.verbose = 1;
	if (cfg.workers < 1 || cfg.workers > MAXTHREADS)
		cfg.workers = 2;

	pthread_t th[MAXTHREADS];
	for (long i = 0; i < cfg.workers; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	printf("%s: %d workers, chunks of %d, modulus %ld\n", cfg.name, cfg.workers, cfg.chunk, cfg.modulus);
	work(cfg.workers); /* main takes the last share */
	for (int i = 0; i < cfg.workers; i++)
		pthread_join(th[i], NULL);

	long total = 0;
	for (int i = 0; i <= cfg.workers; i++)
		total += results[i];
	pthread_mutex_lock(&log_lock);
	int lines = progress_lines;
	pthread_mutex_unlock(&log_lock);

	cfg.modulus = 97; /* second pass, single-threaded */
	cfg.verbose = 0;
	work(0);
	printf("total %ld (%d progress lines), second pass %ld\n", total, lines, results[0]);
	return 0;
}
