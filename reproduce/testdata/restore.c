/* restore.c — a counter bumped and restored in two critical sections of L
 * (inside an outer lock O); main asserts it is 0 under L. The recorded run
 * is clean: main reads 20 ms after the thread is done. With argument "ok"
 * the bump and the restore are one critical section: never fails. */
#include <assert.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t O = PTHREAD_MUTEX_INITIALIZER, L = PTHREAD_MUTEX_INITIALIZER;
static int g;
static int one_cs;

static void *work(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&O);
	if (one_cs) {
		pthread_mutex_lock(&L);
		g++;
		g--;
		pthread_mutex_unlock(&L);
	} else {
		pthread_mutex_lock(&L);
		g++;
		pthread_mutex_unlock(&L);
		pthread_mutex_lock(&L);
		g--;
		pthread_mutex_unlock(&L);
	}
	pthread_mutex_unlock(&O);
	return NULL;
}

int main(int argc, char **argv)
{
	one_cs = argc > 1 && strcmp(argv[1], "ok") == 0;
	pthread_t t;
	pthread_create(&t, NULL, work, NULL);
	usleep(20000);
	pthread_mutex_lock(&L);
	assert(g == 0);
	pthread_mutex_unlock(&L);
	pthread_join(t, NULL);
	return 0;
}
