/*
 * refcount_get_put_ok.c — a session counted by reference: each request takes
 * a reference under the session's own mutex when it starts (refs += 1) and
 * drops it when it ends (refs = refs - 1), and whoever drops the last one
 * frees the session. The byte total is added in one critical section.
 * The twin of refcount_get_put.c (the second request starts 20 ms later).
 * Correct: nothing should be reported.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct session { pthread_mutex_t lock; int refs; long bytes; };
static struct session *sess;

/* Drops a reference; the last one frees the session. */
static void session_put(struct session *s)
{
	pthread_mutex_lock(&s->lock);
	s->refs = s->refs - 1;
	int last = s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (last)
		free(s);
}

static void *request(void *arg)
{
	long len = (long)arg;
	if (len > 300)
		usleep(20000);
	struct session *s = sess;
	pthread_mutex_lock(&s->lock);
	s->refs += 1;
	pthread_mutex_unlock(&s->lock);

	/* Accounting in one step. */
	pthread_mutex_lock(&s->lock);
	s->bytes += len;
	pthread_mutex_unlock(&s->lock);

	session_put(s);
	return NULL;
}

int main(void)
{
	sess = calloc(1, sizeof *sess);
	pthread_mutex_init(&sess->lock, NULL);
	sess->refs = 1;
	pthread_t a, b;
	pthread_create(&a, NULL, request, (void *)300);
	pthread_create(&b, NULL, request, (void *)500);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld bytes\n", sess->bytes);
	session_put(sess);
	return 0;
}
