/* ticks.c — a worker whose callback, run by an uninstrumented event loop
 * (dispatch.c), reads the clock that another thread advances. Each
 * callback is one operation: reading the clock in one turn and again in
 * the next is no unrepeatable read. */
#include <pthread.h>
#include <unistd.h>

void dispatch(void (*cb)(void *), void *arg, int turns);

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long now; /* the shared clock */
long seen[64]; /* not static: the stores are kept */

static void on_tick(void *arg)
{
	int *turn = arg;
	pthread_mutex_lock(&m);
	seen[*turn % 64] = now; /* @tick */
	pthread_mutex_unlock(&m);
	++*turn;
	usleep(200);
}

static void *worker(void *arg)
{
	int turn = 0;
	(void)arg;
	dispatch(on_tick, &turn, 40);
	return 0;
}

static void *clock_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 40; i++) {
		pthread_mutex_lock(&m);
		now++; /* @advance */
		pthread_mutex_unlock(&m);
		usleep(200);
	}
	return 0;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, 0, worker, 0);
	pthread_create(&b, 0, clock_thread, 0);
	pthread_join(a, 0);
	pthread_join(b, 0);
	return 0;
}
