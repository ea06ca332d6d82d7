/*
 * locus_err.h — the error codes every layer returns. Their values are the
 * MPI error classes (the MPI layer checks that at compile time), so a code
 * travels up from the core or the collectives to the user unchanged.
 */
#ifndef LOCUS_ERR_H
#define LOCUS_ERR_H

enum {
    LOCUS_SUCCESS = 0,
    LOCUS_ERR_BUFFER = 1,
    LOCUS_ERR_COUNT = 2,
    LOCUS_ERR_TYPE = 3,
    LOCUS_ERR_TAG = 4,
    LOCUS_ERR_COMM = 5,
    LOCUS_ERR_RANK = 6,
    LOCUS_ERR_ROOT = 7,
    LOCUS_ERR_OP = 9,
    LOCUS_ERR_ARG = 12,
    LOCUS_ERR_TRUNCATE = 14,
    LOCUS_ERR_OTHER = 15,
    LOCUS_ERR_INTERN = 16,
    LOCUS_ERR_NO_MEM = 21
};

#endif
