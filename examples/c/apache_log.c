/*
 * apache_log.c — the buffered log writer of Apache's mod_log_config
 * (McPatom paper, Fig. 8; Apache bug 25520).
 *
 * Worker threads append log lines to one shared buffer without a lock.
 * log_writer() checks that the line fits (reading buf->outcnt), then reads
 * buf->outcnt again to find where to copy it: if another worker appends
 * in between, the second read sees a different value than the check did
 * (pattern P1, unrepeatable read: R1 W2 R1), and lines are overwritten or
 * written past the end of the buffer.
 *
 *   mcpredict cc -O1 -o apache_log apache_log.c
 *   mcpredict record -o apache.csv -- ./apache_log 2 3 20000
 *   mcpredict run apache.csv
 *
 * The unlocked "buf->outcnt += len" is also a lost update (P3: R1 W2 W1),
 * and the count it reads may differ from the one the copy used (P1).
 * mcpredict:args 2 3 20000
 * mcpredict:expect P1 buf->outcnt local:Read@check remote:Write@update local:Read@reread
 * mcpredict:expect P3 buf->outcnt local:Read@update remote:Write@update local:Write@update
 * mcpredict:allow P1 buf->outcnt local:Read@reread remote:Write@update local:Read@update
 * mcpredict:notexhibited buf->outcnt
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_BUFSIZE 256

typedef struct {
	int fd;
	char outbuf[LOG_BUFSIZE];
	int outcnt;
} buffered_log;

static buffered_log *buf;

static void flush_log(buffered_log *b)
{
	if (b->outcnt > 0) {
		ssize_t w = write(b->fd, b->outbuf, (size_t)b->outcnt);
		(void)w;
		b->outcnt = 0;
	}
}

static void log_writer(const char *line, int len)
{
	if (len + buf->outcnt > LOG_BUFSIZE) /* @check: R outcnt */
		flush_log(buf);
	char *s = &buf->outbuf[buf->outcnt]; /* @reread: R outcnt, may differ from the check */
	memcpy(s, line, (size_t)len);
	buf->outcnt += len; /* @update: R W outcnt */
}

static void *worker(void *arg)
{
	long lines = (long)arg;
	char line[64];
	for (long i = 0; i < lines; i++) {
		int len = snprintf(line, sizeof line, "GET /index.html %ld 200\n", i);
		log_writer(line, len);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2;
	long lines = argc > 2 ? atol(argv[2]) : 3;
	long stagger = argc > 3 ? atol(argv[3]) : 0;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 2;
	buf = calloc(1, sizeof *buf);
	buf->fd = open("/dev/null", O_WRONLY);
	pthread_t th[64];
	for (int i = 0; i < nthreads; i++) {
		pthread_create(&th[i], NULL, worker, (void *)lines);
		if (stagger > 0)
			usleep((useconds_t)stagger);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	flush_log(buf);
	close(buf->fd);
	free(buf);
	printf("logged %ld lines\n", nthreads * lines);
	return 0;
}
