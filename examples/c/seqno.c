/*
 * seqno.c — senders stamp every message with the channel's sequence
 * number under the channel's lock (m.seq = ch->seq++) and write it out
 * while holding it, so the stream is in sequence order; a transfer sends a
 * BEGIN and an END message. The numbering is right; the bug is the flow
 * control window, under the same lock but read in one critical section
 * and written back in the next. The second sender starts 20 ms later: the
 * recorded run loses no credit, and only the sequence numbers order the
 * senders. Bug: lost update (P3) of chan.window.
 *
 * mcpredict:expect P3 chan.window local:Read@read remote:Write@write local:Write@write
 * mcpredict:notexhibited chan.window
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

enum { BEGIN = 1, END = 2 };
struct msg { unsigned seq; int type; long len; };
struct channel { pthread_mutex_t lock; unsigned seq; long window; FILE *out; };

static struct channel chan = { PTHREAD_MUTEX_INITIALIZER, 1, 4096 };

static void send_msg(struct channel *ch, int type, long len)
{
	struct msg m = { 0, type, len };
	pthread_mutex_lock(&ch->lock);
	m.seq = ch->seq++;
	fwrite(&m, sizeof m, 1, ch->out);
	pthread_mutex_unlock(&ch->lock);
}

static void *sender(void *arg)
{
	long len = (long)arg;
	if (len > 1000)
		usleep(20000);
	send_msg(&chan, BEGIN, len);

	/* Take credit for the data: the window is read, then written back. */
	pthread_mutex_lock(&chan.lock);
	long w = chan.window; /* @read */
	pthread_mutex_unlock(&chan.lock);
	pthread_mutex_lock(&chan.lock);
	chan.window = w - len; /* @write */
	pthread_mutex_unlock(&chan.lock);

	send_msg(&chan, END, len);
	return NULL;
}

int main(void)
{
	chan.out = fopen("/dev/null", "w");
	pthread_t a, b;
	pthread_create(&a, NULL, sender, (void *)600);
	pthread_create(&b, NULL, sender, (void *)1600);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	fclose(chan.out);
	printf("window %ld after %u messages\n", chan.window, chan.seq - 1);
	return 0;
}
