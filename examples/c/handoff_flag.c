/*
 * handoff_flag.c — a message handed to a worker through plain volatile
 * flags that the other side polls with sched_yield(), the pre-C11 way
 * (and the Linux kernel's WRITE_ONCE/READ_ONCE with smp_wmb/smp_rmb).
 * Correct on x86 and with gcc, which is what this example is about:
 * nothing should be reported.
 *
 * main writes the message, then sets ready; the worker polls ready, then
 * reads the message and writes its reply, then sets done; main polls done
 * and reads the reply. The compiler barriers keep gcc from moving the
 * message's accesses across the flag's; x86 keeps stores in order and
 * loads in order, so no fence is needed. The worker starts late (the
 * delay, in microseconds), so it usually finds ready already set and reads
 * the flag once.
 *
 *   mcpredict cc -O1 -o handoff_flag handoff_flag.c
 *   mcpredict record -o flag.csv -- ./handoff_flag 2000
 *   mcpredict run flag.csv
 *
 * mcpredict:args 2000
 * mcpredict:expect none
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define barrier() __asm__ __volatile__("" ::: "memory")

static struct {
	int len;
	char text[32];
} msg;
static long reply;
static volatile int ready, done;

static void *worker(void *arg)
{
	usleep((useconds_t)(long)arg);
	while (!ready)
		sched_yield();
	barrier(); /* smp_rmb() */
	long h = 5381;
	for (int i = 0; i < msg.len; i++)
		h = h * 33 + msg.text[i];
	reply = h;
	barrier(); /* smp_wmb() */
	done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	long delay = argc > 1 ? atol(argv[1]) : 2000;
	pthread_t w;
	pthread_create(&w, NULL, worker, (void *)delay);
	const char *s = "hello, worker";
	int len = 0;
	while (s[len] != '\0' && len < (int)sizeof msg.text) {
		msg.text[len] = s[len];
		len++;
	}
	msg.len = len;
	barrier(); /* smp_wmb() */
	ready = 1;
	while (!done)
		sched_yield();
	barrier(); /* smp_rmb() */
	printf("reply %ld\n", reply);
	pthread_join(w, NULL);
	return 0;
}
