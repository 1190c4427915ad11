/*
 * request_id_log_ok.c — a worker takes an id for each log record it writes
 * from a counter in a struct, inline and under the counter's mutex
 * (id = ++ids.last): one when a job starts, one when it ends. The ids are
 * only stored in the thread's own log. The pending work of the shared job
 * queue is decremented in one critical section. The twin of
 * request_id_log.c (the second worker starts 20 ms later).
 * Correct: nothing should be reported.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct record { unsigned long id; const char *what; };
struct queue { pthread_mutex_t lock; long pending; };

static struct { pthread_mutex_t lock; unsigned long last; } ids = { PTHREAD_MUTEX_INITIALIZER, 1000 };
static struct queue *queue;
static struct record logs[2][2];

static void *worker(void *arg)
{
	long me = (long)arg;
	usleep(me * 20000);
	struct record *log = logs[me];
	pthread_mutex_lock(&ids.lock);
	log[0].id = ++ids.last;
	pthread_mutex_unlock(&ids.lock);
	log[0].what = "start";

	/* Finish a job. */
	pthread_mutex_lock(&queue->lock);
	queue->pending--;
	pthread_mutex_unlock(&queue->lock);

	pthread_mutex_lock(&ids.lock);
	log[1].id = ++ids.last;
	pthread_mutex_unlock(&ids.lock);
	log[1].what = "end";
	return NULL;
}

int main(void)
{
	queue = malloc(sizeof *queue);
	pthread_mutex_init(&queue->lock, NULL);
	queue->pending = 2;
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			printf("%lu %d %s\n", logs[i][j].id, i, logs[i][j].what);
	printf("%ld pending\n", queue->pending);
	free(queue);
	return 0;
}
