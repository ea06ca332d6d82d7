/*
 * dtype_basic.c — the basic types, one per element kind, statically
 * initialised (never freed), and the kind classes.
 */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "dtype_impl.h"

#define BASIC(name, ctype, kind)                                               \
    static locus_dblock_t dt_##name##_blk[1] = {{0, sizeof(ctype)}};           \
    static size_t dt_##name##_pre[2] = {0, sizeof(ctype)};                     \
    static locus_dsig_t dt_##name##_sig[1] = {{kind, 1}};                      \
    static struct locus_dtype dt_##name = {                                    \
        .refs = 1, .basic = 1, .committed = 1, .elem = kind,                   \
        .size = sizeof(ctype), .align = _Alignof(ctype),                       \
        .lb = 0, .extent = sizeof(ctype),                                      \
        .true_lb = 0, .true_extent = sizeof(ctype),                            \
        .nrep = 1, .nblocks = 1, .blocks = dt_##name##_blk,                    \
        .prefix = dt_##name##_pre, .unit_size = sizeof(ctype),                 \
        .nsig = 1, .sig = dt_##name##_sig, .unit_nbasic = 1 };

/* The pair types are laid out like the C struct {V v; I i;}, padding and
 * all, so an array of them in user memory has the C layout. */
#define PAIR_MERGED(s, vt) (offsetof(struct s, i) == sizeof(vt))
#define PAIR(name, vt, vkind, it, ikind, kind)                                 \
    struct dt_##name##_pair { vt v; it i; };                                   \
    static locus_dblock_t dt_##name##_blk[2] = {                               \
        {0, PAIR_MERGED(dt_##name##_pair, vt) ? sizeof(vt) + sizeof(it) : sizeof(vt)}, \
        {offsetof(struct dt_##name##_pair, i), sizeof(it)}};                   \
    static size_t dt_##name##_pre[3] = {                                       \
        0, PAIR_MERGED(dt_##name##_pair, vt) ? sizeof(vt) + sizeof(it) : sizeof(vt), \
        sizeof(vt) + sizeof(it)};                                              \
    static locus_dsig_t dt_##name##_sig[2] = {{vkind, 1}, {ikind, 1}};         \
    static struct locus_dtype dt_##name = {                                    \
        .refs = 1, .basic = 1, .committed = 1, .elem = kind,                   \
        .size = sizeof(vt) + sizeof(it), .align = _Alignof(struct dt_##name##_pair), \
        .lb = 0, .extent = sizeof(struct dt_##name##_pair),                    \
        .true_lb = 0, .true_extent = offsetof(struct dt_##name##_pair, i) + sizeof(it), \
        .nrep = 1,                                                             \
        .nblocks = PAIR_MERGED(dt_##name##_pair, vt) ? 1 : 2, .blocks = dt_##name##_blk, \
        .prefix = dt_##name##_pre, .unit_size = sizeof(vt) + sizeof(it),      \
        .nsig = 2, .sig = dt_##name##_sig, .unit_nbasic = 2 };

BASIC(byte, unsigned char, LOCUS_EL_BYTE)
BASIC(char, char, LOCUS_EL_CHAR)
BASIC(signed_char, signed char, LOCUS_EL_SCHAR)
BASIC(unsigned_char, unsigned char, LOCUS_EL_UCHAR)
BASIC(short, short, LOCUS_EL_SHORT)
BASIC(unsigned_short, unsigned short, LOCUS_EL_USHORT)
BASIC(int, int, LOCUS_EL_INT)
BASIC(unsigned, unsigned, LOCUS_EL_UINT)
BASIC(long, long, LOCUS_EL_LONG)
BASIC(unsigned_long, unsigned long, LOCUS_EL_ULONG)
BASIC(long_long, long long, LOCUS_EL_LLONG)
BASIC(unsigned_long_long, unsigned long long, LOCUS_EL_ULLONG)
BASIC(int8_t, int8_t, LOCUS_EL_INT8)
BASIC(uint8_t, uint8_t, LOCUS_EL_UINT8)
BASIC(int16_t, int16_t, LOCUS_EL_INT16)
BASIC(uint16_t, uint16_t, LOCUS_EL_UINT16)
BASIC(int32_t, int32_t, LOCUS_EL_INT32)
BASIC(uint32_t, uint32_t, LOCUS_EL_UINT32)
BASIC(int64_t, int64_t, LOCUS_EL_INT64)
BASIC(uint64_t, uint64_t, LOCUS_EL_UINT64)
BASIC(int128, locus_int128_t, LOCUS_EL_INT128)
BASIC(aint, intptr_t, LOCUS_EL_AINT)
BASIC(offset, long long, LOCUS_EL_OFFSET)
BASIC(count, long long, LOCUS_EL_COUNT)
BASIC(wchar, wchar_t, LOCUS_EL_WCHAR)
BASIC(float, float, LOCUS_EL_FLOAT)
BASIC(double, double, LOCUS_EL_DOUBLE)
BASIC(long_double, long double, LOCUS_EL_LDOUBLE)
BASIC(float16, locus_float16_t, LOCUS_EL_FLOAT16)
BASIC(float128, locus_float128_t, LOCUS_EL_FLOAT128)
BASIC(cfloat, float complex, LOCUS_EL_CFLOAT)
BASIC(cdouble, double complex, LOCUS_EL_CDOUBLE)
BASIC(cldouble, long double complex, LOCUS_EL_CLDOUBLE)
BASIC(cfloat16, locus_cfloat16_t, LOCUS_EL_CFLOAT16)
BASIC(cfloat128, locus_cfloat128_t, LOCUS_EL_CFLOAT128)
BASIC(c_bool, bool, LOCUS_EL_BOOL)
BASIC(flogical1, int8_t, LOCUS_EL_FLOGICAL1)
BASIC(flogical2, int16_t, LOCUS_EL_FLOGICAL2)
BASIC(flogical4, int32_t, LOCUS_EL_FLOGICAL4)
BASIC(flogical8, int64_t, LOCUS_EL_FLOGICAL8)
BASIC(flogical16, locus_int128_t, LOCUS_EL_FLOGICAL16)
PAIR(float_int, float, LOCUS_EL_FLOAT, int, LOCUS_EL_INT, LOCUS_EL_FLOAT_INT)
PAIR(double_int, double, LOCUS_EL_DOUBLE, int, LOCUS_EL_INT, LOCUS_EL_DOUBLE_INT)
PAIR(long_int, long, LOCUS_EL_LONG, int, LOCUS_EL_INT, LOCUS_EL_LONG_INT)
PAIR(2int, int, LOCUS_EL_INT, int, LOCUS_EL_INT, LOCUS_EL_2INT)
PAIR(short_int, short, LOCUS_EL_SHORT, int, LOCUS_EL_INT, LOCUS_EL_SHORT_INT)
PAIR(long_double_int, long double, LOCUS_EL_LDOUBLE, int, LOCUS_EL_INT, LOCUS_EL_LDOUBLE_INT)
PAIR(2float, float, LOCUS_EL_FLOAT, float, LOCUS_EL_FLOAT, LOCUS_EL_2FLOAT)
PAIR(2double, double, LOCUS_EL_DOUBLE, double, LOCUS_EL_DOUBLE, LOCUS_EL_2DOUBLE)

static locus_dtype_t *const basic_table[LOCUS_EL_NKINDS] = {
    [LOCUS_EL_BYTE] = &dt_byte, [LOCUS_EL_CHAR] = &dt_char,
    [LOCUS_EL_SCHAR] = &dt_signed_char, [LOCUS_EL_UCHAR] = &dt_unsigned_char,
    [LOCUS_EL_SHORT] = &dt_short, [LOCUS_EL_USHORT] = &dt_unsigned_short,
    [LOCUS_EL_INT] = &dt_int, [LOCUS_EL_UINT] = &dt_unsigned,
    [LOCUS_EL_LONG] = &dt_long, [LOCUS_EL_ULONG] = &dt_unsigned_long,
    [LOCUS_EL_LLONG] = &dt_long_long, [LOCUS_EL_ULLONG] = &dt_unsigned_long_long,
    [LOCUS_EL_INT8] = &dt_int8_t, [LOCUS_EL_UINT8] = &dt_uint8_t,
    [LOCUS_EL_INT16] = &dt_int16_t, [LOCUS_EL_UINT16] = &dt_uint16_t,
    [LOCUS_EL_INT32] = &dt_int32_t, [LOCUS_EL_UINT32] = &dt_uint32_t,
    [LOCUS_EL_INT64] = &dt_int64_t, [LOCUS_EL_UINT64] = &dt_uint64_t,
    [LOCUS_EL_INT128] = &dt_int128,
    [LOCUS_EL_AINT] = &dt_aint, [LOCUS_EL_OFFSET] = &dt_offset, [LOCUS_EL_COUNT] = &dt_count,
    [LOCUS_EL_WCHAR] = &dt_wchar,
    [LOCUS_EL_FLOAT] = &dt_float, [LOCUS_EL_DOUBLE] = &dt_double,
    [LOCUS_EL_LDOUBLE] = &dt_long_double, [LOCUS_EL_FLOAT16] = &dt_float16,
    [LOCUS_EL_FLOAT128] = &dt_float128,
    [LOCUS_EL_CFLOAT] = &dt_cfloat, [LOCUS_EL_CDOUBLE] = &dt_cdouble,
    [LOCUS_EL_CLDOUBLE] = &dt_cldouble, [LOCUS_EL_CFLOAT16] = &dt_cfloat16,
    [LOCUS_EL_CFLOAT128] = &dt_cfloat128,
    [LOCUS_EL_BOOL] = &dt_c_bool, [LOCUS_EL_FLOGICAL1] = &dt_flogical1,
    [LOCUS_EL_FLOGICAL2] = &dt_flogical2, [LOCUS_EL_FLOGICAL4] = &dt_flogical4,
    [LOCUS_EL_FLOGICAL8] = &dt_flogical8, [LOCUS_EL_FLOGICAL16] = &dt_flogical16,
    [LOCUS_EL_FLOAT_INT] = &dt_float_int, [LOCUS_EL_DOUBLE_INT] = &dt_double_int,
    [LOCUS_EL_LONG_INT] = &dt_long_int, [LOCUS_EL_2INT] = &dt_2int,
    [LOCUS_EL_SHORT_INT] = &dt_short_int, [LOCUS_EL_LDOUBLE_INT] = &dt_long_double_int,
    [LOCUS_EL_2FLOAT] = &dt_2float, [LOCUS_EL_2DOUBLE] = &dt_2double,
};

locus_dtype_t *locus_dtype_basic(locus_elem_t el)
{
    return (int)el >= 0 && el < LOCUS_EL_NKINDS ? basic_table[el] : NULL;
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

int locus_elem_is_integer(locus_elem_t el)
{
    return el >= LOCUS_EL_CHAR && el <= LOCUS_EL_INT128;
}

int locus_elem_is_ml(locus_elem_t el)
{
    return el >= LOCUS_EL_AINT && el <= LOCUS_EL_COUNT;
}

int locus_elem_is_float(locus_elem_t el)
{
    return el >= LOCUS_EL_FLOAT && el <= LOCUS_EL_FLOAT128;
}

int locus_elem_is_complex(locus_elem_t el)
{
    return el >= LOCUS_EL_CFLOAT && el <= LOCUS_EL_CFLOAT128;
}

int locus_elem_is_logical(locus_elem_t el)
{
    return el >= LOCUS_EL_BOOL && el <= LOCUS_EL_FLOGICAL16;
}

int locus_elem_is_pair(locus_elem_t el)
{
    return el >= LOCUS_EL_FLOAT_INT && el < LOCUS_EL_NKINDS;
}

int locus_elem_pair(locus_elem_t el, locus_elem_t *value, locus_elem_t *index, size_t *ioff)
{
    if (!locus_elem_is_pair(el))
        return 0;
    const locus_dtype_t *t = locus_dtype_basic(el);
    *value = t->sig[0].kind;
    *index = t->sig[1].kind;
    *ioff = t->nblocks == 2 ? (size_t)t->blocks[1].off : locus_elem_size(*value);
    return 1;
}
