/*
 * stringbuffer.c — the StringBuffer atomicity violation of Java's JDK
 * (java.lang.StringBuffer.append(StringBuffer), JDK bug 4810210; the
 * example of Flanagan & Qadeer's atomicity type system), in C.
 *
 * Every method of a string buffer locks the buffer, so each is atomic on
 * its own. sb_append(sb, other) locks sb only, asks other for its length
 * (sb_length locks other, reads other->count, unlocks) and then copies
 * that many characters (sb_getchars locks other again, checks the length
 * against other->count and copies). If another thread shortens other in
 * between (sb_setlength, under other's lock), the length is stale and
 * sb_getchars fails: the two reads of other->count in two critical
 * sections were meant to be one atomic step (pattern P1, unrepeatable
 * read: R1 W2 R1).
 *
 * With a stagger (second argument, microseconds) the truncating thread
 * runs after the append: the recorded run shows no violation, and
 * mcpredict predicts it.
 *
 *   mcpredict cc -O1 -o stringbuffer stringbuffer.c
 *   mcpredict record -o sb.csv -- ./stringbuffer 1 20000
 *   mcpredict run sb.csv
 *
 * mcpredict:args 1 20000
 * mcpredict:expect P1 line->count local:Read@length remote:Write@setlength local:Read@getchars
 * mcpredict:notexhibited line->count
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct strbuf {
	pthread_mutex_t lock;
	char *value;
	int count;
	int capacity;
};

static struct strbuf *sb_new(const char *init)
{
	struct strbuf *sb = malloc(sizeof *sb);
	pthread_mutex_init(&sb->lock, NULL);
	sb->count = (int)strlen(init);
	sb->capacity = sb->count + 16;
	sb->value = malloc((size_t)sb->capacity);
	memcpy(sb->value, init, (size_t)sb->count);
	return sb;
}

static int sb_length(struct strbuf *sb)
{
	pthread_mutex_lock(&sb->lock);
	int n = sb->count; /* @length: R count */
	pthread_mutex_unlock(&sb->lock);
	return n;
}

/* Copies characters [begin, end) of sb to dst; -1 if out of range. */
static int sb_getchars(struct strbuf *sb, int begin, int end, char *dst)
{
	pthread_mutex_lock(&sb->lock);
	if (begin < 0 || end > sb->count || begin > end) { /* @getchars: R count, may differ from sb_length's */
		pthread_mutex_unlock(&sb->lock);
		return -1; /* Java: StringIndexOutOfBoundsException */
	}
	memcpy(dst, sb->value + begin, (size_t)(end - begin));
	pthread_mutex_unlock(&sb->lock);
	return 0;
}

static void sb_setlength(struct strbuf *sb, int len)
{
	pthread_mutex_lock(&sb->lock);
	if (len >= 0 && len <= sb->capacity)
		sb->count = len; /* @setlength: W count */
	pthread_mutex_unlock(&sb->lock);
}

static void ensure_capacity(struct strbuf *sb, int min)
{
	if (min > sb->capacity) {
		sb->capacity = 2 * min;
		sb->value = realloc(sb->value, (size_t)sb->capacity);
	}
}

static int sb_append(struct strbuf *sb, struct strbuf *other)
{
	pthread_mutex_lock(&sb->lock);
	int len = sb_length(other);
	ensure_capacity(sb, sb->count + len);
	int err = sb_getchars(other, 0, len, sb->value + sb->count);
	if (err == 0)
		sb->count += len;
	pthread_mutex_unlock(&sb->lock);
	return err;
}

static struct strbuf *log_buf, *line;
static long stagger;

static void *appender(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		if (sb_append(log_buf, line) != 0)
			fprintf(stderr, "append %ld: index out of range\n", i);
	return NULL;
}

static void *truncator(void *arg)
{
	long n = (long)arg;
	if (stagger > 0)
		usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	for (long i = 0; i < n; i++)
		sb_setlength(line, 3);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	stagger = argc > 2 ? atol(argv[2]) : 0;
	log_buf = sb_new("log: ");
	line = sb_new("GET /index.html 200");
	pthread_t a, t;
	pthread_create(&a, NULL, appender, (void *)n);
	pthread_create(&t, NULL, truncator, (void *)n);
	pthread_join(a, NULL);
	pthread_join(t, NULL);
	printf("%.*s\n", log_buf->count, log_buf->value);
	return 0;
}
