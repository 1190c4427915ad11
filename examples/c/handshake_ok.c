/*
 * handshake_ok.c — the correct twin of handshake.c: request and reply
 * share one lock, and the client posts and checks in one critical
 * section, so the server's take-and-answer runs wholly before or after
 * it. Every transaction is conflict-serializable: the conflict analysis
 * reports nothing, and nor does any other.
 *
 *   mcpredict cc -O1 -o handshake_ok handshake_ok.c
 *   mcpredict record -o handshake_ok.csv -- ./handshake_ok
 *   mcpredict run --analysis conflict handshake_ok.csv
 *
 * mcpredict:expect none
 * mcpredict:reports conflict none
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int request;
static int reply;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static int post_and_check(int id)
{
	pthread_mutex_lock(&lock);
	request = id;
	usleep(20000); /* the server waits for the lock */
	int r = reply;
	pthread_mutex_unlock(&lock);
	return r;
}

__attribute__((noinline)) static void serve(void)
{
	pthread_mutex_lock(&lock);
	int q = request;
	reply = q;
	pthread_mutex_unlock(&lock);
}

static void *client(void *arg)
{
	(void)arg;
	if (post_and_check(1) == 1)
		printf("client: impossible\n");
	return NULL;
}

static void *server(void *arg)
{
	(void)arg;
	usleep(5000);
	serve();
	return NULL;
}

int main(void)
{
	pthread_t c, s;
	pthread_create(&c, NULL, client, NULL);
	pthread_create(&s, NULL, server, NULL);
	pthread_join(c, NULL);
	pthread_join(s, NULL);
	return 0;
}
