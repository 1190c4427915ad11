/*
 * set_ptr_len.c — a status message kept as a buffer pointer and its length
 * { data, len }. The updater points the message at a new buffer under the
 * lock, then measures the text and stores the length in a second critical
 * section; the sender takes pointer and length in one critical section and
 * checksums len bytes of data. Each field is locked; the pair is not: the
 * sender can take the new buffer with the old buffer's length and read
 * past the end of the text (the buffers are padded here, so the run does
 * not crash). Bug: half-done update read (M5).
 * mcpredict:args 40
 * mcpredict:expect M5|M6 msg.data+msg.len local:Write@data local:Write@len
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

static const char texts[][32] = {
	"idle",
	"loading configuration",
	"serving",
	"draining connections",
};

static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	const char *data;
	size_t len;
} msg = { texts[0], 4 };
static int rounds;

static void set_status(const char *text)
{
	pthread_mutex_lock(&msg_lock);
	msg.data = text; /* @data */
	pthread_mutex_unlock(&msg_lock);

	size_t n = strlen(text);
	pthread_mutex_lock(&msg_lock);
	msg.len = n; /* @len */
	pthread_mutex_unlock(&msg_lock);
}

static unsigned send_status(void)
{
	pthread_mutex_lock(&msg_lock);
	const char *p = msg.data; /* @getdata */
	size_t n = msg.len;       /* @getlen */
	pthread_mutex_unlock(&msg_lock);

	unsigned sum = 0;
	for (size_t i = 0; i < n; i++)
		sum = sum * 31 + (unsigned char)p[i];
	return sum;
}

static void *updater(void *arg)
{
	for (int i = 1; i <= rounds; i++) {
		set_status(texts[i % 4]);
		usleep(20); /* the next status change */
	}
	return NULL;
}

static void *sender(void *arg)
{
	unsigned sum = 0;
	for (int i = 0; i < rounds; i++) {
		sum ^= send_status();
		usleep(30); /* the next send */
	}
	return (void *)(long)sum;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 40;
	pthread_t u, s;
	void *sum;
	pthread_create(&s, NULL, sender, NULL);
	pthread_create(&u, NULL, updater, NULL);
	pthread_join(s, &sum);
	pthread_join(u, NULL);
	printf("status %s, checksum %lx\n", msg.data, (long)sum);
	return 0;
}
