/*
 * rec_stack_ctx.c — a lost update on a struct that lives on main's stack.
 *
 * main keeps the job's context in a local variable and gives its address
 * to a worker thread, pthread_create(&t, NULL, worker, &ctx): the most
 * common way of sharing data with a thread. Both then count finished
 * items in ctx.done through finish_item(), which reads the count and
 * writes it back without the lock: the other thread's update can come in
 * between and be lost (pattern P3, R1 W2 W1).
 *
 * The recorder records main's own accesses to the part of its stack that
 * it gave away (not the rest of its stack) and names the struct from the
 * DWARF of main like a global: main::ctx.done. ctx.name, which only main
 * touches, is not in the trace.
 *
 * With a stagger (second argument, in microseconds) main starts counting
 * after the worker has finished: the recorded run loses no update, and
 * mcpredict still predicts the bug.
 *
 *   mcpredict cc -O1 -o rec_stack_ctx rec_stack_ctx.c
 *   mcpredict record -o stack.csv -- ./rec_stack_ctx 2 20000
 *   mcpredict run stack.csv
 *
 * mcpredict:args 2 20000
 * mcpredict:expect P3 main::ctx.done local:Read@read remote:Write@write local:Write@write
 * mcpredict:notexhibited main::ctx.done
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctx {
	pthread_mutex_t lock; /* held for the item itself, not the count */
	long items;
	long done;
	char name[16];
};

__attribute__((noinline)) static void finish_item(struct ctx *c)
{
	long d = c->done; /* @read: BUG, the read ... */
	c->done = d + 1;  /* @write: ... and the write are not one atomic step */
}

static void *worker(void *arg)
{
	struct ctx *c = arg;
	for (long i = 0; i < c->items; i++) {
		pthread_mutex_lock(&c->lock);
		pthread_mutex_unlock(&c->lock);
		finish_item(c);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct ctx ctx = {.lock = PTHREAD_MUTEX_INITIALIZER};
	ctx.items = argc > 1 ? atol(argv[1]) : 2;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t t;
	pthread_create(&t, NULL, worker, &ctx);
	if (stagger > 0)
		usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	strcpy(ctx.name, "main");
	for (long i = 0; i < ctx.items; i++)
		finish_item(&ctx);
	pthread_join(t, NULL);
	printf("%s: done %ld (expected %ld)\n", ctx.name, ctx.done, 2 * ctx.items);
	return 0;
}
