/*
 * mpit/mpit.h — the tool information interface chapter (MPI_T), above
 * env/ only: what mpit.c
 * (init, categories, enumerations, events, sources), mpit_cvar.c (control
 * variables = the LOCUS_* tunables), mpit_pvar.c (performance variables =
 * counters of the core, the transports and the collectives) and
 * mpit_pvar_handle.c (their sessions and handles) share.
 *
 * MPI_T may be used before MPI_Init and after MPI_Finalize; it never calls
 * an error handler: every function returns MPI_SUCCESS or an MPI_T_ERR_*
 * code. Handles are pointers to the structs below; a handle is accepted
 * only when found in the list that owns it, so a freed or foreign handle
 * is reported (MPI_T_ERR_INVALID_HANDLE), never dereferenced. The calls
 * written as locus_t_<x>_impl have generated entry points that check
 * MPI_T_init_thread came first and that each result has somewhere to go
 * (MPI_T_ERR_INVALID); the others check for themselves.
 */
#ifndef LOCUS_MPI_MPIT_H
#define LOCUS_MPI_MPIT_H

#include <stdint.h>

#include "env/env.h"

/* Categories: one per layer (the transports grouped under one parent). */
enum {
    MPIT_CAT_LAUNCH, MPIT_CAT_PLACE, MPIT_CAT_BOOT, MPIT_CAT_CORE, MPIT_CAT_TRANSPORT,
    MPIT_CAT_SELF, MPIT_CAT_SHM, MPIT_CAT_TCP, MPIT_CAT_OFI, MPIT_CAT_COLL, MPIT_CAT_MPI, MPIT_CAT_RMA,
    MPIT_CAT_BENCH, MPIT_NCATS
};

/* An enumeration (MPI_T_enum): a name and its items, comma-separated;
 * item i has value i. */
typedef struct {
    const char *name;
    const char *items;
} mpit_enum_t;

typedef struct mpit_cvar_handle mpit_cvar_handle_t;
struct mpit_cvar_handle {
    mpit_cvar_handle_t *next;
    int index;
};

typedef struct mpit_pvar_handle mpit_pvar_handle_t;
typedef struct mpit_session mpit_session_t;
struct mpit_pvar_handle {
    mpit_pvar_handle_t *next;
    int index;
    locus_comm_t *comm;       /* MPI_T_BIND_MPI_COMM: the bound communicator... */
    uint32_t ctx;             /* ...while it still has this context id */
    int started;
    uint64_t accum;           /* counted in earlier started intervals */
    uint64_t base;            /* source value at the last start or reset */
    uint64_t last;            /* source value at the last read (used once the
                                 runtime is gone, after MPI_Finalize) */
};
struct mpit_session {
    mpit_session_t *next;
    mpit_pvar_handle_t *handles;
};

/* The interface's state: one per process. */
typedef struct {
    int refs;                      /* MPI_T_init_thread calls not yet finalized */
    mpit_cvar_handle_t *cvar_handles;
    mpit_session_t *sessions;
} mpit_state_t;

extern mpit_state_t locus_mpit;

/* MPI_T_ERR_NOT_INITIALIZED unless MPI_T_init_thread was called. */
#define MPIT_CHECK_INIT()                                                       \
    do { if (locus_mpit.refs <= 0) return MPI_T_ERR_NOT_INITIALIZED; } while (0)

/*
 * MPI_T's convention for strings: *len is the buffer size on input; the
 * string is copied (truncated, always terminated) when buf is not NULL and
 * *len > 0; on return *len is the length copied including the terminator,
 * or the length needed when nothing was copied. A NULL len returns nothing.
 */
void mpit_str_out(char *buf, int *len, const char *s);

/* Item i of e into buf (at most size bytes with the terminator); -1 when
 * e has no item i. The number of items of e. */
int mpit_enum_item(const mpit_enum_t *e, int i, char *buf, size_t size);
int mpit_enum_count(const mpit_enum_t *e);
/* e when it is an enumeration of this library (cvars' or pvars'), else NULL. */
const mpit_enum_t *mpit_enum_of(MPI_T_enum e);

/* mpit_cvar.c: the number of control variables, and the category and
 * enumeration (NULL: none) of one. */
int mpit_cvar_count(void);
int mpit_cvar_category(int index);
const mpit_enum_t *mpit_cvar_enum(int index);
int mpit_cvar_enum_owns(const mpit_enum_t *e);
void mpit_cvar_handles_free(void);

/* mpit_pvar.c: the same for performance variables, and what the handles
 * need: a variable's class and binding (index valid), and the value of
 * h's source: 0 and *out, 1 while the runtime is not running (before
 * MPI_Init, after MPI_Finalize), -1 when h's communicator is gone. */
int mpit_pvar_count(void);
int mpit_pvar_category(int index);
int mpit_pvar_enum_owns(const mpit_enum_t *e);
int mpit_pvar_class(int index);
int mpit_pvar_binding(int index);
int mpit_pvar_source(const mpit_pvar_handle_t *h, uint64_t *out);
/* mpit_pvar_handle.c: ends every performance session (the last
 * MPI_T_finalize). */
void mpit_pvar_sessions_free(void);

#endif
