/* stdin_count.c — reads N from standard input; two workers add N to a
 * counter in a read and a write of two critical sections; the second
 * worker starts argv[1] us later, so the recorded run loses nothing. Exits
 * 1 when the total is short. With an empty input it does no work. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total, n;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		long v = total;
		pthread_mutex_unlock(&m);
		pthread_mutex_lock(&m);
		total = v + 1;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (scanf("%ld", &n) != 1)
		return 0;
	pthread_t a, b;
	pthread_create(&a, NULL, work, NULL);
	usleep(argc > 1 ? atoi(argv[1]) : 20000);
	pthread_create(&b, NULL, work, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (total != 2 * n) {
		fprintf(stderr, "total %ld, want %ld\n", total, 2 * n);
		return 1;
	}
	return 0;
}
