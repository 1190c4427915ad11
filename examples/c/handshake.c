/*
 * handshake.c — a request and its reply under two locks: the client's
 * post-and-check is not atomic, though every access is locked and each
 * lock is taken once.
 *
 * The client posts a request under req_lock, then reads the reply under
 * rep_lock, expecting the reply to an earlier request (or none). The
 * server reads the request under req_lock and writes its reply under
 * rep_lock. Here the server runs between the client's two critical
 * sections, so the client reads the reply to the request it has just
 * posted: no serial order of post_and_check and serve gives that (run
 * alone first, the client reads no reply; run after the server, the
 * server never saw its request).
 *
 * Each variable is accessed once by each thread, and each lock is taken
 * once per call: McPatom's one-variable patterns and SideTrack's windows
 * of one lock see nothing. The conflict-serializability check reports
 * post_and_check with the cycle client -> server (request, req_lock) ->
 * client (reply, rep_lock). handshake_ok.c is the correct twin.
 *
 *   mcpredict cc -O1 -o handshake handshake.c
 *   mcpredict record -o handshake.csv -- ./handshake
 *   mcpredict run --analysis conflict handshake.csv
 *
 * mcpredict:expect none
 * mcpredict:reports conflict cycle
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int request;
static int reply;
static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rep_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static int post_and_check(int id)
{
	pthread_mutex_lock(&req_lock);
	request = id; /* @post */
	pthread_mutex_unlock(&req_lock);
	usleep(20000); /* the server runs here */
	pthread_mutex_lock(&rep_lock);
	int r = reply; /* @check */
	pthread_mutex_unlock(&rep_lock);
	return r;
}

__attribute__((noinline)) static void serve(void)
{
	pthread_mutex_lock(&req_lock);
	int q = request; /* @take */
	pthread_mutex_unlock(&req_lock);
	pthread_mutex_lock(&rep_lock);
	reply = q; /* @answer */
	pthread_mutex_unlock(&rep_lock);
}

static void *client(void *arg)
{
	(void)arg;
	int r = post_and_check(1);
	if (r == 1)
		printf("client: the reply to request 1 came within the call that posted it\n");
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
