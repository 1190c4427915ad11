/*
 * stack_loop.c — a work stack shared by several threads: push and pop
 * under one mutex, called in loops, and a state variable that every
 * worker polls under the same mutex once per iteration to know when to
 * stop. Correct: nothing should be reported.
 *
 * A work item is a number n: a worker pops it and, if n > 1, pushes n/2
 * and n - n/2, else counts one leaf. main pushes the first items, then
 * polls (under the lock) until the stack is empty and no worker holds an
 * item, and sets state = STOPPING; the workers see it at their next poll
 * and return. Every access to the stack, busy, leaves and state is inside
 * a critical section, and each critical section is complete on its own:
 * the value read at the top of one is never assumed in the next.
 *
 *   mcpredict cc -O1 -o stack_loop stack_loop.c
 *   mcpredict record -o stack.csv -- ./stack_loop 2 6
 *   mcpredict run stack.csv
 *
 * mcpredict:args 2 6
 * mcpredict:expect none
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define CAP 64
#define MAXTHREADS 8

enum { RUNNING, STOPPING };

static struct {
	int items[CAP];
	int top;
} stack;
static int busy;   /* items popped and not finished */
static long leaves;
static int state = RUNNING;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int push(int v)
{
	pthread_mutex_lock(&lock);
	int ok = stack.top < CAP;
	if (ok)
		stack.items[stack.top++] = v;
	pthread_mutex_unlock(&lock);
	return ok;
}

/* Pops an item into *v and marks the caller busy; 0 if the stack is empty. */
static int pop(int *v)
{
	pthread_mutex_lock(&lock);
	int ok = stack.top > 0;
	if (ok) {
		*v = stack.items[--stack.top];
		busy++;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

static void finish(long leaf)
{
	pthread_mutex_lock(&lock);
	leaves += leaf;
	busy--;
	pthread_mutex_unlock(&lock);
}

static int running(void)
{
	pthread_mutex_lock(&lock);
	int r = state == RUNNING;
	pthread_mutex_unlock(&lock);
	return r;
}

static void *worker(void *arg)
{
	(void)arg;
	while (running()) {
		int v;
		if (!pop(&v)) {
			sched_yield();
			continue;
		}
		if (v > 1) {
			push(v / 2);
			push(v - v / 2);
			finish(0);
		} else {
			finish(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2;
	int first = argc > 2 ? atoi(argv[2]) : 6;
	if (nthreads < 1 || nthreads > MAXTHREADS)
		nthreads = 2;
	push(first);
	push(2);
	pthread_t th[MAXTHREADS];
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int done = 0; !done;) {
		pthread_mutex_lock(&lock);
		if (stack.top == 0 && busy == 0) {
			state = STOPPING;
			done = 1;
		}
		pthread_mutex_unlock(&lock);
		if (!done)
			sched_yield();
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("%ld leaves (expected %d)\n", leaves, first + 2);
	return 0;
}
