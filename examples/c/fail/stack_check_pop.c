/*
 * stack_check_pop.c — a locked stack of work items emptied by two
 * consumers that ask stack_size() in one critical section and call
 * stack_pop() in the next. Each operation is locked; the check and the
 * pop are not one: two consumers can both see the last item, and the
 * second pops an empty stack. stack_pop() asserts its precondition,
 * top > 0 (SIGABRT).
 *
 * Main pushes N items, then starts the consumers STAGGER µs apart: the
 * first empties the stack, the second finds it empty and never pops. So
 * the recorded run has no pop by the second consumer, and no prediction
 * from it names the failing schedule: the first consumer held after its
 * last check while the second pops the last item.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect none
 * mcpredict:reproduce failed
 * mcpredict:window stack_size@check stack_pop@pop
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CAP 64

struct stack {
	pthread_mutex_t lock;
	int top;
	long items[CAP];
};

struct stack stk = {PTHREAD_MUTEX_INITIALIZER, 0, {0}};

__attribute__((noinline)) static void stack_push(struct stack *s, long v)
{
	pthread_mutex_lock(&s->lock);
	assert(s->top < CAP);
	s->items[s->top++] = v;
	pthread_mutex_unlock(&s->lock);
}

__attribute__((noinline)) static int stack_size(struct stack *s)
{
	pthread_mutex_lock(&s->lock);
	int n = s->top; /* @check: BUG, the size checked in one critical section ... */
	pthread_mutex_unlock(&s->lock);
	return n;
}

__attribute__((noinline)) static long stack_pop(struct stack *s)
{
	pthread_mutex_lock(&s->lock);
	assert(s->top > 0); /* @pop: ... and the item popped in another */
	long v = s->items[--s->top];
	s->items[s->top] = 0;
	pthread_mutex_unlock(&s->lock);
	return v;
}

static void *consumer(void *arg)
{
	long sum = 0;
	while (stack_size(&stk) > 0) {
		long v = stack_pop(&stk);
		assert(v > 0); /* every item pushed is positive */
		sum += v;
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	if (n > CAP)
		n = CAP;
	for (long i = 1; i <= n; i++)
		stack_push(&stk, i);
	pthread_t a, b;
	pthread_create(&a, NULL, consumer, NULL);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, consumer, NULL);
	void *sa, *sb;
	pthread_join(a, &sa);
	pthread_join(b, &sb);
	printf("consumed %ld + %ld\n", (long)sa, (long)sb);
	assert((long)sa + (long)sb == n * (n + 1) / 2);
	return 0;
}
