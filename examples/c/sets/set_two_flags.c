/*
 * set_two_flags.c — a connection's state as two flags { ready, closing }:
 * exactly one is set, ready while the connection is up, closing while it
 * is shut down. The connection manager reconnects in a loop; shutting down
 * clears ready and then sets closing, reopening clears closing and then
 * sets ready, each flag under the connection lock. A health monitor reads
 * both flags, each through a getter that takes the lock, and names the
 * state. Each flag is locked; the pair is not: the monitor can read both
 * between the manager's two steps and see neither flag set (M5), or read
 * ready before a shutdown and closing after it and see both set (M1).
 * Bug: half-done update read and torn read.
 * mcpredict:args 30
 * mcpredict:expect M5|M6 conn.ready+conn.closing local:Write@downready local:Write@downclosing
 * mcpredict:expect M5|M6 conn.ready+conn.closing local:Write@upclosing local:Write@upready
 * mcpredict:expect M1|M2 conn.ready+conn.closing local:Read@isready local:Read@isclosing
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int ready;
	int closing;
} conn = { 1, 0 };
static int rounds;

static void conn_shutdown(void)
{
	pthread_mutex_lock(&conn_lock);
	conn.ready = 0; /* @downready */
	pthread_mutex_unlock(&conn_lock);
	/* ... stop accepting requests, then mark the connection closing ... */
	pthread_mutex_lock(&conn_lock);
	conn.closing = 1; /* @downclosing */
	pthread_mutex_unlock(&conn_lock);
}

static void conn_reopen(void)
{
	pthread_mutex_lock(&conn_lock);
	conn.closing = 0; /* @upclosing */
	pthread_mutex_unlock(&conn_lock);
	/* ... handshake, then accept requests again ... */
	pthread_mutex_lock(&conn_lock);
	conn.ready = 1; /* @upready */
	pthread_mutex_unlock(&conn_lock);
}

static int conn_is_ready(void)
{
	pthread_mutex_lock(&conn_lock);
	int r = conn.ready; /* @isready */
	pthread_mutex_unlock(&conn_lock);
	return r;
}

static int conn_is_closing(void)
{
	pthread_mutex_lock(&conn_lock);
	int c = conn.closing; /* @isclosing */
	pthread_mutex_unlock(&conn_lock);
	return c;
}

static void *manager(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		conn_shutdown();
		conn_reopen();
		usleep(20); /* serve a while */
	}
	return NULL;
}

static void *monitor(void *arg)
{
	static const char *names[2][2] = { { "invalid (neither)", "closing" }, { "ready", "invalid (both)" } };
	int invalid = 0;
	for (int i = 0; i < rounds; i++) {
		int r = conn_is_ready();
		int c = conn_is_closing();
		const char *state = names[r != 0][c != 0];
		if (state[0] == 'i')
			invalid++;
		usleep(30); /* the next health check */
	}
	return (void *)(long)invalid;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 30;
	pthread_t mg, mn;
	void *invalid;
	pthread_create(&mn, NULL, monitor, NULL);
	pthread_create(&mg, NULL, manager, NULL);
	pthread_join(mn, &invalid);
	pthread_join(mg, NULL);
	printf("%ld invalid states seen\n", (long)invalid);
	return 0;
}
