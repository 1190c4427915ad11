/* Another thread joins the main thread (aget's signal thread cancels main
 * and joins it before it saves the download state): the Join must name
 * thread 1, so that what the joiner reads after it is ordered after
 * everything main did. Main writes total twice in one region after it
 * created the reaper; the reaper reads total only after the join, so no
 * read can fall between the two writes (without the join's order, a
 * dirty read would be predicted).
 *
 * argv[1] "exit": main ends with pthread_exit; "cancel": the reaper
 * cancels main, blocked in a cancellation point, then joins it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_t main_tid;
static volatile long total;
static int cancel;

static void *reaper(void *arg)
{
	(void)arg;
	if (cancel) {
		usleep(50000);
		pthread_cancel(main_tid);
	}
	pthread_join(main_tid, NULL);           /* @join */
	printf("%ld\n", total);                 /* @read */
	exit(0);
}

int main(int argc, char **argv)
{
	cancel = argc > 1 && strcmp(argv[1], "cancel") == 0;
	main_tid = pthread_self();
	pthread_t t;
	pthread_create(&t, NULL, reaper, NULL);
	total = 1;                              /* @first */
	total = total + 41;                     /* @second */
	if (cancel)
		for (;;)
			pause();
	pthread_exit(NULL);
}
