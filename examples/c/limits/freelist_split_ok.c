/*
 * freelist_split_ok.c — request buffers come from a free list under a lock:
 * a request pops one when it starts and pushes it back when it is done,
 * so the next request reuses the same buffer; the count of bytes logged is
 * updated in one critical section. The twin of freelist_split.c (the
 * second request starts 20 ms later). Correct: nothing should be
 * reported.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct buf { struct buf *next; int len; char data[120]; };

static struct buf bufs[3];
static struct buf *free_bufs;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static long logged_bytes;

static struct buf *buf_get(void)
{
	pthread_mutex_lock(&free_lock);
	struct buf *b = free_bufs;
	free_bufs = b->next;
	pthread_mutex_unlock(&free_lock);
	return b;
}

static void buf_put(struct buf *b)
{
	pthread_mutex_lock(&free_lock);
	b->next = free_bufs;
	free_bufs = b;
	pthread_mutex_unlock(&free_lock);
}

static void *request(void *arg)
{
	usleep((long)arg);
	struct buf *b = buf_get();
	b->len = snprintf(b->data, sizeof b->data, "request after %ld us", (long)arg);

	/* Count the logged bytes. */
	pthread_mutex_lock(&log_lock);
	logged_bytes += b->len;
	pthread_mutex_unlock(&log_lock);

	buf_put(b);
	return NULL;
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		buf_put(&bufs[i]);
	pthread_t a, b;
	pthread_create(&a, NULL, request, (void *)0);
	pthread_create(&b, NULL, request, (void *)20000);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld bytes logged\n", logged_bytes);
	return 0;
}
