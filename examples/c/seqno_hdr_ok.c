/*
 * seqno_hdr_ok.c — a global sequence number under a spinlock, copied into a
 * message header on the sender's stack (hdr.seq = next_seq; next_seq =
 * hdr.seq + 1); a sender says HELLO, sends its data and says BYE, each a
 * stamped message. The peer's count of unacknowledged bytes is updated in
 * one critical section. The twin of seqno_hdr.c (the second sender starts
 * 20 ms later). Correct: nothing should be reported.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct header { unsigned long seq; int peer; int len; };
struct peer { pthread_mutex_t lock; long unacked; };

static pthread_spinlock_t seq_lock;
static unsigned long next_seq;
static struct peer peers[2] = { { PTHREAD_MUTEX_INITIALIZER }, { PTHREAD_MUTEX_INITIALIZER } };

static void stamp(struct header *hdr)
{
	pthread_spin_lock(&seq_lock);
	hdr->seq = next_seq;
	next_seq = hdr->seq + 1;
	pthread_spin_unlock(&seq_lock);
}

static void *sender(void *arg)
{
	int len = (int)(long)arg;
	if (len > 1000)
		usleep(20000);
	struct header hello = { 0, 1, 0 }, data = { 0, 1, len }, bye = { 0, 1, 0 };
	stamp(&hello);

	/* Data goes out. */
	struct peer *p = &peers[data.peer];
	pthread_mutex_lock(&p->lock);
	p->unacked = p->unacked + len;
	pthread_mutex_unlock(&p->lock);

	stamp(&data);
	stamp(&bye);
	return (void *)(hello.seq + data.seq + bye.seq);
}

int main(void)
{
	pthread_spin_init(&seq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_t a, b;
	void *ra, *rb;
	pthread_create(&a, NULL, sender, (void *)100);
	pthread_create(&b, NULL, sender, (void *)2000);
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	printf("%lu messages, %ld unacked\n", next_seq, peers[1].unacked);
	return (long)ra + (long)rb == 0;
}
