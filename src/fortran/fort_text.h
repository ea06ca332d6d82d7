/*
 * fort_text.h — what a Fortran binding needs whatever MPI ABI it binds:
 * Fortran strings (blank-padded, lengths passed apart) and scratch arrays
 * for converting handle arrays. Shared by Locus's own Fortran library and
 * the legacy-ABI layers' (src/abi/fortran); no MPI header here.
 */
#ifndef FORT_TEXT_H
#define FORT_TEXT_H

#include <stddef.h>

/* A NUL-terminated copy of a Fortran string without its trailing blanks
 * (and leading ones too when trim_leading: info keys and values); NULL
 * only when memory runs out. The caller frees it. */
char *fort_str_in(const char *s, size_t len, int trim_leading);

/* Copies the C string src into the Fortran string dst[len], truncated or
 * padded with blanks. */
void fort_str_out(char *dst, size_t len, const char *src);

/* Handle arrays up to this many entries are converted on the stack. */
#define FORT_STACK_N 32

/* n elements of size elem: the caller's stack array when n fits, else
 * malloc'd memory (NULL when memory runs out). */
void *fort_scratch(void *stack, int n, size_t elem);
void fort_scratch_free(void *stack, void *p);

#endif
