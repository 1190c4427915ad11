/*
 * publish_unfilled_list.c — an event log kept as a list: post() takes the
 * lock, links a new, zeroed node at the head and then fills it in (its
 * sequence number, text and checksum) before it lets go of the lock. The
 * author thought the lock enough and that published nodes never change,
 * so a monitor reads the head pointer and walks the list without the
 * lock. A monitor that reads the head between the linking and the filling
 * walks into a node with no text and a zero checksum. Bug: a read of an
 * unfilled node (the writes of one critical section seen half done by a
 * thread that takes no lock); the monitor checks every node, and main
 * exits 1 when it saw one unfilled.
 *
 * The producer posts N events; the monitor starts STAGGER µs later, when
 * all are posted, and walks the list N times: the recorded run reads only
 * filled nodes. Holding the producer between the linking and msg_fill()
 * lets the monitor read the zeroes, a value of the node no order of the
 * recorded events gives.
 *
 * mcpredict:args 5 20000
 * mcpredict:reproduce failed
 * mcpredict:window post@publish msg_fill@fill
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
	m->seq = seq; /* @fill: ... before it is filled */
	m->len = snprintf(m->text, sizeof m->text, "event %d", seq);
	m->sum = checksum(m->text, m->len);
}

__attribute__((noinline)) static void post(int seq)
{
	struct msg *m = calloc(1, sizeof *m);
	pthread_mutex_lock(&list_lock);
	m->next = head;
	head = m; /* @publish: BUG, the node is linked ... */
	msg_fill(m, seq);
	pthread_mutex_unlock(&list_lock);
}

/* BUG: the head read without the lock. */
__attribute__((noinline)) static long scan(long *events)
{
	long bad = 0;
	for (struct msg *m = head; m; m = m->next) { /* @scan */
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
		fprintf(stderr, "publish_unfilled_list: the monitor saw %ld unfilled events\n", (long)bad);
		return 1;
	}
	return 0;
}
