/*
 * features.c — exercises every kind of event the recorder knows, for
 * recorder_test.go. Lines marked @name are looked up by the test.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct config {
	int verbose;
	long limit;
	char name[8];
};

struct config *cfg;
int table[8];
struct {
	int a;
	short b[4];
} pair;
void *opaque;
size_t namelen = 4;

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static sem_t sem;
static pthread_barrier_t bar;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *first(void *arg)
{
	(void)arg;
	pthread_rwlock_rdlock(&rw);
	int x = table[3]; /* @table-read */
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_wrlock(&rw);
	table[3] = x + 1; /* @table-write */
	pthread_rwlock_unlock(&rw);
	if (pthread_mutex_trylock(&m) == 0)
		pthread_mutex_unlock(&m);
	pthread_spin_lock(&spin);
	pair.b[2]++; /* @pair */
	pthread_spin_unlock(&spin);
	sem_post(&sem);
	pthread_barrier_wait(&bar);
	cfg->limit = 5;         /* @limit-write */
	((int *)opaque)[1] = 7; /* @opaque */
	static int calls;
	calls++; /* @static */
	return NULL;
}

static void *second(void *arg)
{
	(void)arg;
	int local[4];
	local[0] = 1; /* the thread's own stack: not recorded */
	sem_wait(&sem);
	pthread_barrier_wait(&bar);
	long l = cfg->limit; /* @limit-read */
	memcpy(cfg->name, "abcdefg", namelen); /* @memcpy */
	pthread_mutex_lock(&m);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	int rc = pthread_cond_timedwait(&cv, &m, &ts); /* @timedwait: times out */
	pthread_mutex_unlock(&m);
	return (void *)(long)(l + rc + local[0]);
}

int main(void)
{
	cfg = malloc(sizeof *cfg);
	cfg->verbose = 1; /* @verbose */
	opaque = calloc(4, sizeof(int)); /* @opaque-alloc */
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	sem_init(&sem, 0, 0);
	pthread_barrier_init(&bar, NULL, 2);
	pthread_t a, b;
	pthread_create(&a, NULL, first, NULL);
	pthread_create(&b, NULL, second, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	opaque = realloc(opaque, 4096);
	free(opaque);
	free(cfg);
	printf("%d %d\n", table[3], pair.b[2]);
	return 0;
}
