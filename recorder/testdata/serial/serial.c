/* serial.c — three workers that take turns with a lock and sleep between
 * their turns, so that unscheduled they interleave; for TestSerial. */
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long count;

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++) {
		pthread_mutex_lock(&m);
		count++;
		pthread_mutex_unlock(&m);
		usleep(100);
	}
	return 0;
}

int main(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], 0, work, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], 0);
	return count != 60;
}
