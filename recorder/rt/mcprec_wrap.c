/*
 * mcprec_wrap.c — memcpy/memmove/memset as range accesses.
 *
 * gcc's ThreadSanitizer pass instruments loads and stores but not calls to
 * the string functions, and at -O2 it even turns loops into such calls.
 * `mcpredict cc` links with -Wl,--wrap=memcpy (and memmove, memset), which
 * sends only the program's own calls here; libc's internal copies are not
 * affected. This file is its own archive member so that a link without
 * --wrap does not need the __real_ symbols.
 *
 * clang 17 and later turn the memcpy, memmove and memset intrinsics of
 * instrumented code into calls of __tsan_memcpy, __tsan_memmove and
 * __tsan_memset instead (clang 14 calls memcpy, as gcc does): the same.
 */
#include <stddef.h>
#include <stdint.h>

void __mcprec_range(const void *a, uint64_t size, int write, void *pc);
void *__real_memcpy(void *, const void *, size_t);
void *__real_memmove(void *, const void *, size_t);
void *__real_memset(void *, int, size_t);

void *__wrap_memcpy(void *d, const void *s, size_t n)
{
	void *pc = __builtin_return_address(0);
	__mcprec_range(s, n, 0, pc);
	__mcprec_range(d, n, 1, pc);
	return __real_memcpy(d, s, n);
}

void *__wrap_memmove(void *d, const void *s, size_t n)
{
	void *pc = __builtin_return_address(0);
	__mcprec_range(s, n, 0, pc);
	__mcprec_range(d, n, 1, pc);
	return __real_memmove(d, s, n);
}

void *__wrap_memset(void *d, int c, size_t n)
{
	__mcprec_range(d, n, 1, __builtin_return_address(0));
	return __real_memset(d, c, n);
}

void *__tsan_memcpy(void *d, const void *s, size_t n)
{
	void *pc = __builtin_return_address(0);
	__mcprec_range(s, n, 0, pc);
	__mcprec_range(d, n, 1, pc);
	return __real_memcpy(d, s, n);
}

void *__tsan_memmove(void *d, const void *s, size_t n)
{
	void *pc = __builtin_return_address(0);
	__mcprec_range(s, n, 0, pc);
	__mcprec_range(d, n, 1, pc);
	return __real_memmove(d, s, n);
}

void *__tsan_memset(void *d, int c, size_t n)
{
	__mcprec_range(d, n, 1, __builtin_return_address(0));
	return __real_memset(d, c, n);
}
