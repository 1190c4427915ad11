/*
 * stats_spin_ok.c — statistics in plain globals under a spinlock, updated
 * inline: a request is counted when it arrives, and the bytes it sends are
 * counted as they go out, the header first and the body at the end; the
 * rate limiter's tokens are taken in one critical section. The twin of
 * stats_spin.c (main starts the second client 20 ms after the first).
 * Correct: nothing should be reported.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define HEADER 64

static pthread_spinlock_t stats_lock;
static unsigned long requests, bytes_out;

static struct { pthread_mutex_t lock; long tokens; } limiter = { PTHREAD_MUTEX_INITIALIZER, 100 };

static void *client(void *arg)
{
	long body = (long)arg;
	pthread_spin_lock(&stats_lock);
	requests = requests + 1;
	bytes_out = bytes_out + HEADER;
	pthread_spin_unlock(&stats_lock);

	/* Take tokens for the body. */
	pthread_mutex_lock(&limiter.lock);
	limiter.tokens -= body / 100;
	pthread_mutex_unlock(&limiter.lock);

	pthread_spin_lock(&stats_lock);
	bytes_out = bytes_out + body;
	pthread_spin_unlock(&stats_lock);
	return NULL;
}

int main(void)
{
	pthread_spin_init(&stats_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_t a, b;
	pthread_create(&a, NULL, client, (void *)800);
	usleep(20000);
	pthread_create(&b, NULL, client, (void *)1200);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%lu requests, %lu bytes, %ld tokens\n", requests, bytes_out, limiter.tokens);
	return 0;
}
