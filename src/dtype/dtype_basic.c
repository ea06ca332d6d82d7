/*
 * dtype_basic.c — the basic types, one per element kind, statically
 * initialised (never freed).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "dtype_impl.h"

#define BASIC(name, ctype, kind)                                               \
    static locus_dblock_t dt_##name##_blk[1] = {{0, sizeof(ctype)}};               \
    static size_t dt_##name##_pre[2] = {0, sizeof(ctype)};                         \
    static locus_dsig_t dt_##name##_sig[1] = {{sizeof(ctype), 1}};                 \
    struct locus_dtype locus_dt_##name = {                                     \
        .refs = 1, .basic = 1, .committed = 1, .elem = kind,                   \
        .size = sizeof(ctype), .align = _Alignof(ctype),                       \
        .lb = 0, .extent = sizeof(ctype),                                      \
        .true_lb = 0, .true_extent = sizeof(ctype),                            \
        .nrep = 1, .rstride = 0, .nblocks = 1, .blocks = dt_##name##_blk,           \
        .prefix = dt_##name##_pre, .unit_size = sizeof(ctype),                      \
        .nsig = 1, .sig = dt_##name##_sig, .unit_nbasic = 1 };

/* The pair types are laid out like the C struct {T v; int i;}, padding and
 * all, so an array of them in user memory has the C layout. */
#define PAIR_MERGED(s, vt) (offsetof(struct s, i) == sizeof(vt))
#define PAIR(name, vt, kind)                                                   \
    struct dt_##name##_pair { vt v; int i; };                                       \
    static locus_dblock_t dt_##name##_blk[2] = {                                    \
        {0, PAIR_MERGED(dt_##name##_pair, vt) ? sizeof(vt) + sizeof(int) : sizeof(vt)}, \
        {offsetof(struct dt_##name##_pair, i), sizeof(int)}};                       \
    static size_t dt_##name##_pre[3] = {                                            \
        0, PAIR_MERGED(dt_##name##_pair, vt) ? sizeof(vt) + sizeof(int) : sizeof(vt), \
        sizeof(vt) + sizeof(int)};                                             \
    static locus_dsig_t dt_##name##_sig[2] = {{sizeof(vt), 1}, {sizeof(int), 1}};  \
    struct locus_dtype locus_dt_##name = {                                     \
        .refs = 1, .basic = 1, .committed = 1, .elem = kind,                   \
        .size = sizeof(vt) + sizeof(int), .align = _Alignof(struct dt_##name##_pair), \
        .lb = 0, .extent = sizeof(struct dt_##name##_pair),                         \
        .true_lb = 0, .true_extent = offsetof(struct dt_##name##_pair, i) + sizeof(int), \
        .nrep = 1, .rstride = 0,                                               \
        .nblocks = PAIR_MERGED(dt_##name##_pair, vt) ? 1 : 2, .blocks = dt_##name##_blk, \
        .prefix = dt_##name##_pre, .unit_size = sizeof(vt) + sizeof(int),           \
        .nsig = 2, .sig = dt_##name##_sig, .unit_nbasic = 2 };

BASIC(byte, unsigned char, LOCUS_EL_BYTE)
BASIC(packed, unsigned char, LOCUS_EL_BYTE)
BASIC(char, char, LOCUS_EL_CHAR)
BASIC(signed_char, signed char, LOCUS_EL_SCHAR)
BASIC(unsigned_char, unsigned char, LOCUS_EL_UCHAR)
BASIC(wchar, wchar_t, LOCUS_EL_WCHAR)
BASIC(short, short, LOCUS_EL_SHORT)
BASIC(unsigned_short, unsigned short, LOCUS_EL_USHORT)
BASIC(int, int, LOCUS_EL_INT)
BASIC(unsigned, unsigned, LOCUS_EL_UINT)
BASIC(long, long, LOCUS_EL_LONG)
BASIC(unsigned_long, unsigned long, LOCUS_EL_ULONG)
BASIC(long_long, long long, LOCUS_EL_LLONG)
BASIC(unsigned_long_long, unsigned long long, LOCUS_EL_ULLONG)
BASIC(float, float, LOCUS_EL_FLOAT)
BASIC(double, double, LOCUS_EL_DOUBLE)
BASIC(long_double, long double, LOCUS_EL_LDOUBLE)
BASIC(int8_t, int8_t, LOCUS_EL_INT8)
BASIC(int16_t, int16_t, LOCUS_EL_INT16)
BASIC(int32_t, int32_t, LOCUS_EL_INT32)
BASIC(int64_t, int64_t, LOCUS_EL_INT64)
BASIC(uint8_t, uint8_t, LOCUS_EL_UINT8)
BASIC(uint16_t, uint16_t, LOCUS_EL_UINT16)
BASIC(uint32_t, uint32_t, LOCUS_EL_UINT32)
BASIC(uint64_t, uint64_t, LOCUS_EL_UINT64)
BASIC(c_bool, bool, LOCUS_EL_BOOL)
BASIC(aint, intptr_t, LOCUS_EL_AINT)
BASIC(offset, long long, LOCUS_EL_OFFSET)
BASIC(count, long long, LOCUS_EL_COUNT)
PAIR(float_int, float, LOCUS_EL_FLOAT_INT)
PAIR(double_int, double, LOCUS_EL_DOUBLE_INT)
PAIR(long_int, long, LOCUS_EL_LONG_INT)
PAIR(2int, int, LOCUS_EL_2INT)
PAIR(short_int, short, LOCUS_EL_SHORT_INT)
PAIR(long_double_int, long double, LOCUS_EL_LDOUBLE_INT)

locus_dtype_t *locus_dtype_basic(locus_elem_t el)
{
    static locus_dtype_t *const table[LOCUS_EL_NKINDS] = {
        [LOCUS_EL_BYTE] = &locus_dt_byte, [LOCUS_EL_CHAR] = &locus_dt_char,
        [LOCUS_EL_SCHAR] = &locus_dt_signed_char,
        [LOCUS_EL_UCHAR] = &locus_dt_unsigned_char,
        [LOCUS_EL_WCHAR] = &locus_dt_wchar, [LOCUS_EL_SHORT] = &locus_dt_short,
        [LOCUS_EL_USHORT] = &locus_dt_unsigned_short,
        [LOCUS_EL_INT] = &locus_dt_int, [LOCUS_EL_UINT] = &locus_dt_unsigned,
        [LOCUS_EL_LONG] = &locus_dt_long, [LOCUS_EL_ULONG] = &locus_dt_unsigned_long,
        [LOCUS_EL_LLONG] = &locus_dt_long_long,
        [LOCUS_EL_ULLONG] = &locus_dt_unsigned_long_long,
        [LOCUS_EL_INT8] = &locus_dt_int8_t, [LOCUS_EL_UINT8] = &locus_dt_uint8_t,
        [LOCUS_EL_INT16] = &locus_dt_int16_t, [LOCUS_EL_UINT16] = &locus_dt_uint16_t,
        [LOCUS_EL_INT32] = &locus_dt_int32_t, [LOCUS_EL_UINT32] = &locus_dt_uint32_t,
        [LOCUS_EL_INT64] = &locus_dt_int64_t, [LOCUS_EL_UINT64] = &locus_dt_uint64_t,
        [LOCUS_EL_FLOAT] = &locus_dt_float, [LOCUS_EL_DOUBLE] = &locus_dt_double,
        [LOCUS_EL_LDOUBLE] = &locus_dt_long_double, [LOCUS_EL_BOOL] = &locus_dt_c_bool,
        [LOCUS_EL_AINT] = &locus_dt_aint, [LOCUS_EL_OFFSET] = &locus_dt_offset,
        [LOCUS_EL_COUNT] = &locus_dt_count,
        [LOCUS_EL_FLOAT_INT] = &locus_dt_float_int,
        [LOCUS_EL_DOUBLE_INT] = &locus_dt_double_int,
        [LOCUS_EL_LONG_INT] = &locus_dt_long_int, [LOCUS_EL_2INT] = &locus_dt_2int,
        [LOCUS_EL_SHORT_INT] = &locus_dt_short_int,
        [LOCUS_EL_LDOUBLE_INT] = &locus_dt_long_double_int,
    };
    if ((int)el < 0 || el >= LOCUS_EL_NKINDS)
        return NULL;
    return table[el];
}

size_t locus_elem_size(locus_elem_t el)
{
    locus_dtype_t *t = locus_dtype_basic(el);
    return t ? t->size : 0;
}

size_t locus_elem_extent(locus_elem_t el)
{
    locus_dtype_t *t = locus_dtype_basic(el);
    return t ? (size_t)t->extent : 0;
}
