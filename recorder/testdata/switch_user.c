/* A server that starts as root and then runs as an unprivileged user, as
 * httpd's "User nobody" does (setgid, setuid 65534): the threads it starts
 * after the switch must still be recorded, and the main thread's log,
 * created before the switch, must still grow (more than one 1 MiB window
 * of events after it).
 *
 * Arguments: "stay" does not switch (any user can run it); "lose" puts a
 * directory where thread 2's log goes, so that the runtime cannot create
 * it (EISDIR, even for root) and the recording must say so. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hits;
long grid[64];
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&m);
		hits++; /* @worker-write */
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int stay = 0, lose = 0;
	for (int i = 1; i < argc; i++) {
		stay |= strcmp(argv[i], "stay") == 0;
		lose |= strcmp(argv[i], "lose") == 0;
	}
	hits = 0; /* @before-switch */
	if (!stay && (setgid(65534) != 0 || setuid(65534) != 0)) {
		perror("switching to user 65534");
		return 2;
	}
	if (lose) {
		char path[4096];
		snprintf(path, sizeof path, "%s/p%d.t2.bin", getenv("MCPREDICT_TRACE_DIR"), (int)getpid());
		if (mkdir(path, 0755) != 0) {
			perror(path);
			return 3;
		}
	}
	/* 32 bytes per event: more than a 1 MiB window. */
	for (int i = 0; i < 40000; i++)
		grid[i % 64] = i; /* @main-loop */
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%d\n", hits); /* @after-join */
	return 0;
}
