/*
 * stack_check_pop_ok.c — the stack of stack_check_pop.c emptied through
 * stack_try_pop(), which checks and pops in one critical section and says
 * when the stack was empty: a consumer never pops an empty stack, and the
 * two consumers together consume every item once. Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect none
 * mcpredict:reproduce clean
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

/* pop_locked pops from a stack that is not empty; s->lock is held. */
static long pop_locked(struct stack *s)
{
	assert(s->top > 0); /* @pop */
	long v = s->items[--s->top];
	s->items[s->top] = 0;
	return v;
}

/* stack_try_pop pops into *v and returns 1, or returns 0 when empty. */
__attribute__((noinline)) static int stack_try_pop(struct stack *s, long *v)
{
	int ok = 0;
	pthread_mutex_lock(&s->lock);
	if (s->top > 0) { /* @check */
		*v = pop_locked(s);
		ok = 1;
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void *consumer(void *arg)
{
	long sum = 0, v;
	while (stack_try_pop(&stk, &v)) {
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
