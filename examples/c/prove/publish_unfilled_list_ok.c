/*
 * publish_unfilled_list_ok.c — the event log of publish_unfilled_list.c
 * done right: post() fills the node in first and then links it at the head
 * under the lock, and the monitor reads the head under the lock. A node
 * is complete before any thread can reach it and never changes after, so
 * the monitor walks the rest of the list without the lock. Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:reproduce clean
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct msg {
	struct msg *next;
	int seq;
	int len;
	char text[24];
	unsigned sum;
};

static struct msg *head;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static long rounds;

static unsigned checksum(const char *s, int len)
{
	unsigned h = 5381;
	for (int i = 0; i < len; i++)
		h = h * 33 + (unsigned char)s[i];
	return h;
}

__attribute__((noinline)) static void msg_fill(struct msg *m, int seq)
{
	m->seq = seq; /* @fill */
	m->len = snprintf(m->text, sizeof m->text, "event %d", seq);
	m->sum = checksum(m->text, m->len);
}

__attribute__((noinline)) static void post(int seq)
{
	struct msg *m = calloc(1, sizeof *m);
	msg_fill(m, seq);
	pthread_mutex_lock(&list_lock);
	m->next = head;
	head = m; /* @publish */
	pthread_mutex_unlock(&list_lock);
}

__attribute__((noinline)) static long scan(long *events)
{
	long bad = 0;
	pthread_mutex_lock(&list_lock);
	struct msg *first = head; /* @scan */
	pthread_mutex_unlock(&list_lock);
	for (struct msg *m = first; m; m = m->next) {
		if (m->len == 0 || m->seq == 0 || checksum(m->text, m->len) != m->sum)
			bad++;
		else
			(*events)++;
	}
	return bad;
}

static void *producer(void *arg)
{
	for (int i = 1; i <= rounds; i++)
		post(i);
	return NULL;
}

static void *monitor(void *arg)
{
	long bad = 0, events = 0;
	for (long i = 0; i < rounds; i++)
		bad += scan(&events);
	*(long *)arg = events;
	return (void *)bad;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	long events = 0;
	pthread_t p, c;
	pthread_create(&p, NULL, producer, NULL);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&c, NULL, monitor, &events);
	void *bad;
	pthread_join(p, NULL);
	pthread_join(c, &bad);
	printf("%ld events seen\n", events);
	if (bad) {
		fprintf(stderr, "publish_unfilled_list_ok: the monitor saw %ld unfilled events\n", (long)bad);
		return 1;
	}
	return 0;
}
