/*
 * locus_err.h — the error codes every layer returns. Their values are the
 * MPI error classes of the MPI-5 ABI (the MPI layer checks that at compile
 * time), so a code travels up from the core or the collectives to the user
 * unchanged.
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
    LOCUS_ERR_REQUEST = 7,
    LOCUS_ERR_ROOT = 8,
    LOCUS_ERR_GROUP = 9,
    LOCUS_ERR_OP = 10,
    LOCUS_ERR_ARG = 13,
    LOCUS_ERR_TRUNCATE = 15,
    LOCUS_ERR_OTHER = 16,
    LOCUS_ERR_INTERN = 17,
    LOCUS_ERR_NO_MEM = 39
};

#endif
