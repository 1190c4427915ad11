/*
 * refcount_get_put.c — a session counted by reference: each request takes
 * a reference under the session's own mutex when it starts (refs += 1) and
 * drops it when it ends (refs = refs - 1), and whoever drops the last one
 * frees the session. The counting is correct; the bug is the session's
 * byte total, read in one critical section and written back in the next.
 * The second request starts 20 ms later, so the recorded run loses no
 * bytes, but it could: the reference count alone orders the two requests.
 * Bug: lost update (P3) of sess->bytes.
 *
 * mcpredict:expect P3 sess->bytes local:Read@read remote:Write@write local:Write@write
 * mcpredict:notexhibited sess->bytes
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

	/* Accounting in two steps: another request can add in between. */
	pthread_mutex_lock(&s->lock);
	long b = s->bytes; /* @read */
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&s->lock);
	s->bytes = b + len; /* @write */
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
