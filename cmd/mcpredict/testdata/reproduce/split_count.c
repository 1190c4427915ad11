/* A counter read in one critical section and written back in the next
 * (P3): the second thread starts after the first has finished, so the
 * recorded run loses nothing; main exits 1 when an increment was lost. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long count;

__attribute__((noinline)) static void add(void)
{
	pthread_mutex_lock(&m);
	long c = count; /* the read */
	pthread_mutex_unlock(&m);
	pthread_mutex_lock(&m);
	count = c + 1; /* the write */
	pthread_mutex_unlock(&m);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		add();
	return NULL;
}

int main(int argc, char **argv)
{
	long stagger = argc > 1 ? atol(argv[1]) : 0;
	pthread_t a, b;
	pthread_create(&a, NULL, worker, NULL);
	usleep((useconds_t)stagger);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (count != 6) {
		fprintf(stderr, "lost an update: count %ld, want 6\n", count);
		return 1;
	}
	return 0;
}
