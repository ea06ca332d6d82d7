/*
 * fort_text.c — Fortran strings and scratch arrays (fort_text.h), for
 * every Fortran binding of the tree.
 */
#include <stdlib.h>
#include <string.h>

#include "fort_text.h"

char *fort_str_in(const char *s, size_t len, int trim_leading)
{
    size_t b = 0, e = len;
    if (trim_leading)
        while (b < e && s[b] == ' ')
            b++;
    while (e > b && s[e - 1] == ' ')
        e--;
    char *c = malloc(e - b + 1);
    if (!c)
        return NULL;
    if (e > b)
        memcpy(c, s + b, e - b);
    c[e - b] = '\0';
    return c;
}

void fort_str_out(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n > len)
        n = len;
    if (n)
        memcpy(dst, src, n);
    if (len > n)
        memset(dst + n, ' ', len - n);
}

void *fort_scratch(void *stack, int n, size_t elem)
{
    if (n <= FORT_STACK_N)
        return stack;
    return malloc((size_t)(n > 0 ? n : 0) * elem);
}

void fort_scratch_free(void *stack, void *p)
{
    if (p != stack)
        free(p);
}
