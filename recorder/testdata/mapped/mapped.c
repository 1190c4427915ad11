/* Memory the program maps itself (issue 38: Apache's scoreboard was named
 * by its raw address): an anonymous shared mapping holding a struct whose
 * counter two threads increment without a lock, and a file mapped shared
 * whose first word they race on too. Each is named after its mapping's
 * call site and an offset, the same in every run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct board {
	long pad;
	long served;
};

static void *area;    /* void *: no pointer type names the mapping */
static void *file;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		((long *)area)[1]++;                 /* @served */
		((int *)file)[1]++;                  /* @file */
	}
	return NULL;
}

/* A file of one page; no FILE * in main, whose accesses would vote for
 * struct FILE as the mapping's type. */
__attribute__((noinline)) static int page_file(void)
{
	FILE *f = tmpfile();
	if (!f || ftruncate(fileno(f), 4096) != 0)
		return -1;
	return fileno(f);
}

int main(void)
{
	pthread_t t1, t2;
	area = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0); /* @map */
	int fd = page_file();
	if (area == MAP_FAILED || fd < 0)
		return 2;
	file = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0); /* @fmap */
	if (file == MAP_FAILED)
		return 2;
	pthread_create(&t1, NULL, worker, NULL);
	pthread_create(&t2, NULL, worker, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	long n = ((long *)area)[1];
	munmap(file, 4096);                          /* @unmap */
	munmap(area, 4096);
	return n > 0 ? 0 : 1;
}
