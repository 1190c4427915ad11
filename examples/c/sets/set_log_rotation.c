/*
 * set_log_rotation.c — a rotating log: the current file's generation and
 * the bytes written to it { generation, bytes }. Writers look up the
 * generation under the log lock, write their record to that file, then add
 * its size under the lock again; a rotator thread starts a new file once
 * the current one is full, bumping the generation and zeroing the byte
 * count in one critical section. Each field is locked; the pair is not: a
 * rotation between a writer's two critical sections counts a record that
 * went to the old file against the new one. Bug: torn read (M1).
 * mcpredict:args 2 30
 * mcpredict:expect M1|M2 logfile.generation+logfile.bytes local:Read@gen local:Read@bytes
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIMIT 256

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int generation;
	long bytes;
} logfile;
static FILE *sink;
static int nwriters, rounds;

static void log_write(const char *who, int seq)
{
	char line[80];
	pthread_mutex_lock(&log_lock);
	int gen = logfile.generation; /* @gen */
	pthread_mutex_unlock(&log_lock);

	int n = snprintf(line, sizeof line, "app.log.%d: %s request %d done\n", gen, who, seq);
	fputs(line, sink);
	usleep(20); /* the write reaches the disk */

	pthread_mutex_lock(&log_lock);
	logfile.bytes += n; /* @bytes */
	pthread_mutex_unlock(&log_lock);
}

static void rotate_if_full(void)
{
	pthread_mutex_lock(&log_lock);
	if (logfile.bytes >= LIMIT) {
		logfile.generation++; /* @rotgen */
		logfile.bytes = 0;    /* @rotbytes */
	}
	pthread_mutex_unlock(&log_lock);
}

static void *writer(void *arg)
{
	char who[16];
	snprintf(who, sizeof who, "worker%ld", (long)arg);
	for (int i = 0; i < rounds; i++)
		log_write(who, i);
	return NULL;
}

static void *rotator(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		rotate_if_full();
		usleep(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nwriters = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 30;
	sink = fopen("/dev/null", "w");
	pthread_t r, w[8];
	pthread_create(&r, NULL, rotator, NULL);
	for (long i = 0; i < nwriters; i++)
		pthread_create(&w[i], NULL, writer, (void *)i);
	for (int i = 0; i < nwriters; i++)
		pthread_join(w[i], NULL);
	pthread_join(r, NULL);
	fclose(sink);
	printf("generation %d, %ld bytes in the current file\n", logfile.generation, logfile.bytes);
	return 0;
}
