/* Error classes and codes, their strings, error handlers, argument checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

/* The layers below return LOCUS_ERR_* codes that travel up unchanged. */
#define SAME(x) ((int)LOCUS_ERR_##x == (int)MPI_ERR_##x)
_Static_assert(SAME(BUFFER) && SAME(COUNT) && SAME(TYPE) && SAME(TAG) && SAME(COMM) &&
               SAME(RANK) && SAME(REQUEST) && SAME(ROOT) && SAME(GROUP) && SAME(OP) &&
               SAME(ARG) && SAME(TRUNCATE) && SAME(OTHER) && SAME(INTERN) && SAME(NO_MEM) &&
               (int)LOCUS_SUCCESS == (int)MPI_SUCCESS,
               "layer error codes are MPI error classes");
#undef SAME

#define ERR_PREDEF_LAST MPI_ERR_ABI
/* Added classes and codes come after MPI_ERR_LASTCODE, as programs
 * (mpi4py) expect of them. */
#define ERR_ADDED_FIRST (MPI_ERR_LASTCODE + 1)

static const char *const err_text[ERR_PREDEF_LAST + 1] = {
    [MPI_SUCCESS] = "MPI_SUCCESS: no error",
    [MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
    [MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
    [MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype (null or not committed)",
    [MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
    [MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
    [MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
    [MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
    [MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
    [MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
    [MPI_ERR_OP] = "MPI_ERR_OP: invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid topology",
    [MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
    [MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
    [MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
    [MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated on receive",
    [MPI_ERR_OTHER] = "MPI_ERR_OTHER: known error not in this list",
    [MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
    [MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
    [MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
    [MPI_ERR_ACCESS] = "MPI_ERR_ACCESS: permission denied",
    [MPI_ERR_AMODE] = "MPI_ERR_AMODE: invalid file access mode",
    [MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assert argument",
    [MPI_ERR_BAD_FILE] = "MPI_ERR_BAD_FILE: invalid file name",
    [MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address",
    [MPI_ERR_CONVERSION] = "MPI_ERR_CONVERSION: data conversion failed",
    [MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement",
    [MPI_ERR_DUP_DATAREP] = "MPI_ERR_DUP_DATAREP: data representation already defined",
    [MPI_ERR_FILE_EXISTS] = "MPI_ERR_FILE_EXISTS: file exists",
    [MPI_ERR_FILE_IN_USE] = "MPI_ERR_FILE_IN_USE: file in use",
    [MPI_ERR_FILE] = "MPI_ERR_FILE: invalid file",
    [MPI_ERR_INFO_KEY] = "MPI_ERR_INFO_KEY: invalid info key",
    [MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: no such info key",
    [MPI_ERR_INFO_VALUE] = "MPI_ERR_INFO_VALUE: invalid info value",
    [MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
    [MPI_ERR_IO] = "MPI_ERR_IO: I/O error",
    [MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid attribute key",
    [MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
    [MPI_ERR_NAME] = "MPI_ERR_NAME: invalid service name",
    [MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
    [MPI_ERR_NOT_SAME] = "MPI_ERR_NOT_SAME: arguments differ between processes",
    [MPI_ERR_NO_SPACE] = "MPI_ERR_NO_SPACE: no space left",
    [MPI_ERR_NO_SUCH_FILE] = "MPI_ERR_NO_SUCH_FILE: no such file",
    [MPI_ERR_PORT] = "MPI_ERR_PORT: invalid port name",
    [MPI_ERR_QUOTA] = "MPI_ERR_QUOTA: quota exceeded",
    [MPI_ERR_READ_ONLY] = "MPI_ERR_READ_ONLY: read-only file or file system",
    [MPI_ERR_RMA_ATTACH] = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    [MPI_ERR_RMA_CONFLICT] = "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
    [MPI_ERR_RMA_RANGE] = "MPI_ERR_RMA_RANGE: target memory outside the window",
    [MPI_ERR_RMA_SHARED] = "MPI_ERR_RMA_SHARED: memory cannot be shared",
    [MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
    [MPI_ERR_SERVICE] = "MPI_ERR_SERVICE: invalid service",
    [MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size",
    [MPI_ERR_SPAWN] = "MPI_ERR_SPAWN: could not spawn processes",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported",
    [MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
    [MPI_ERR_RMA_FLAVOR] = "MPI_ERR_RMA_FLAVOR: wrong window flavor",
    [MPI_ERR_PROC_ABORTED] = "MPI_ERR_PROC_ABORTED: a peer process aborted",
    [MPI_ERR_VALUE_TOO_LARGE] = "MPI_ERR_VALUE_TOO_LARGE: value too large for its output",
    [MPI_ERR_SESSION] = "MPI_ERR_SESSION: invalid session",
    [MPI_ERR_ERRHANDLER] = "MPI_ERR_ERRHANDLER: invalid error handler",
    [MPI_ERR_ABI] = "MPI_ERR_ABI: ABI mismatch",
};

/* Classes and codes the program added (MPI_Add_error_class/code): codes
 * from ERR_ADDED_FIRST on; each knows its class and string. */
static struct {
    int *class_of;           /* [n]: class of code ERR_ADDED_FIRST + i */
    char **text;             /* [n], or NULL entries */
    int n, cap;
} added;

/* The class of a code, or -1 when it is none. */
static int code_class(int code)
{
    if (code >= 0 && code <= ERR_PREDEF_LAST)
        return code;
    int i = code - ERR_ADDED_FIRST;
    return i >= 0 && i < added.n ? added.class_of[i] : -1;
}

int locus_err_code_known(int code)
{
    return code_class(code) >= 0;
}

static int code_add(int cls, int *out)
{
    if (added.n == added.cap) {
        int cap = added.cap ? 2 * added.cap : 16;
        int *c = realloc(added.class_of, (size_t)cap * sizeof *c);
        if (c)
            added.class_of = c;
        char **t = realloc(added.text, (size_t)cap * sizeof *t);
        if (t)
            added.text = t;
        if (!c || !t)
            return MPI_ERR_NO_MEM;
        added.cap = cap;
    }
    if (added.n >= (1 << 24)) /* far past any real program's need */
        return MPI_ERR_OTHER;
    int code = ERR_ADDED_FIRST + added.n;
    added.class_of[added.n] = cls < 0 ? code : cls;   /* a new class is its own class */
    added.text[added.n++] = NULL;
    *out = code;
    return MPI_SUCCESS;
}

/* The largest code in use (the MPI_LASTUSEDCODE attribute). */
int locus_err_lastused(void)
{
    return added.n ? ERR_ADDED_FIRST + added.n - 1 : MPI_ERR_LASTCODE;
}

static const char *code_text(int code)
{
    if (code >= 0 && code <= ERR_PREDEF_LAST)
        return err_text[code];
    int i = code - ERR_ADDED_FIRST;
    if (i >= 0 && i < added.n && added.class_of[i] >= 0)
        return added.text[i] ? added.text[i] : "";
    return NULL;
}

/* MPI_Remove_error_* (session_errh.c): what 0 removes the string of an
 * added class or code, 1 an added code, 2 an added class none of whose
 * codes is left; a code or class is removed only once its string is
 * (MPI-4.1, as MPICH does). A removed code is no code any more (class_of -1); the
 * last ones are handed out again. MPI_SUCCESS or MPI_ERR_ARG. */
int locus_err_remove(int code, int what)
{
    int i = code - ERR_ADDED_FIRST;
    if (i < 0 || i >= added.n || added.class_of[i] < 0)
        return MPI_ERR_ARG;
    int is_class = added.class_of[i] == code;
    if (what != 0 && ((what == 2) != is_class || added.text[i]))
        return MPI_ERR_ARG;
    for (int k = 0; what == 2 && k < added.n; k++)
        if (k != i && added.class_of[k] == code)
            return MPI_ERR_ARG;
    free(added.text[i]);
    added.text[i] = NULL;
    if (what != 0)
        added.class_of[i] = -1;
    while (added.n > 0 && added.class_of[added.n - 1] < 0)
        added.n--;
    return MPI_SUCCESS;
}

/* ---- the calls (their entry points are generated with the checks: MPI
 * initialized where the call needs it, a live communicator, somewhere to
 * write) ---- */

int locus_error_string_impl(int errorcode, char *string, int *resultlen)
{
    const char *t = code_text(errorcode);
    if (!string || !t)
        return MPI_ERR_ARG;
    snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}

int locus_error_class_impl(int errorcode, int *errorclass)
{
    int cls = code_class(errorcode);
    if (cls < 0)
        return MPI_ERR_ARG;
    *errorclass = cls;
    return MPI_SUCCESS;
}

int locus_add_error_class_impl(int *errorclass)
{
    return code_add(-1, errorclass);
}

int locus_add_error_code_impl(int errorclass, int *errorcode)
{
    /* A code belongs to a class: a predefined one or one the program added. */
    if (code_class(errorclass) != errorclass)
        return MPI_ERR_ARG;
    return code_add(errorclass, errorcode);
}

int locus_add_error_string_impl(int errorcode, const char *string)
{
    int i = errorcode - ERR_ADDED_FIRST;
    /* The predefined strings cannot be changed. */
    if (!string || i < 0 || i >= added.n || added.class_of[i] < 0 ||
        strlen(string) >= MPI_MAX_ERROR_STRING)
        return MPI_ERR_ARG;
    char *t = strdup(string);
    if (!t)
        return MPI_ERR_NO_MEM;
    free(added.text[i]);
    added.text[i] = t;
    return MPI_SUCCESS;
}

/* ---- error handlers ---- */

locus_errh_t locus_errh_fatal = { ERRH_FATAL, 1, NULL, MPI_ERRORS_ARE_FATAL };
locus_errh_t locus_errh_abort = { ERRH_ABORT, 1, NULL, MPI_ERRORS_ABORT };
locus_errh_t locus_errh_return = { ERRH_RETURN, 1, NULL, MPI_ERRORS_RETURN };

locus_errh_t *locus_errh_of(MPI_Errhandler h)
{
    if (LOCUS_IS_PREDEF(h))
        return h == MPI_ERRORS_ARE_FATAL ? &locus_errh_fatal
               : h == MPI_ERRORS_ABORT ? &locus_errh_abort
               : h == MPI_ERRORS_RETURN ? &locus_errh_return : NULL;
    locus_errh_t *e = (locus_errh_t *)h;
    return locus_handle_is(e, LOCUS_HK_ERRH) && e->kind == ERRH_USER && e->refs > 0 ? e : NULL;
}

/* Prints one line and ends the job: the fatal handlers. */
static void err_fatal(int errclass, const char *fn)
{
    const char *t = code_text(errclass);
    if (!t)
        t = "unknown error code";
    if (locus_mpi.core.fatal)
        fprintf(stderr, "locus: rank %d: %s: %s (%s)\n", locus_mpi.boot.rank, fn, t,
                locus_mpi.core.fatal_msg);
    else if (locus_mpi.detail[0])
        fprintf(stderr, "locus: rank %d: %s: %s (%s)\n", locus_mpi.boot.rank, fn, t,
                locus_mpi.detail);
    else
        fprintf(stderr, "locus: rank %d: %s: %s\n", locus_mpi.boot.rank, fn, t);
    fflush(stderr);
    if (!locus_mpi_active())
        exit(1); /* no job to abort: before MPI_Init or after MPI_Finalize */
    locus_boot_abort(&locus_mpi.boot, 1, t);
}

int locus_mpi_err(locus_comm_t *c, int errclass, const char *fn)
{
    if (errclass == MPI_SUCCESS)
        return MPI_SUCCESS;
    /* A communicator the user freed keeps its handler while a pending
     * operation holds it (the request's error goes there). */
    if (!c || c->refs <= 0)
        c = &locus_comm_world;
    locus_errh_t *e = c->refs > 0 && c->errh ? c->errh : &locus_errh_fatal;
    if (e->kind == ERRH_RETURN) {
        locus_mpi.detail[0] = '\0';
        return errclass;
    }
    if (e->kind == ERRH_USER) {
        MPI_Comm h = locus_comm_handle(c);
        int code = errclass;
        locus_mpi.detail[0] = '\0';
        /* A Fortran attribute call that failed before its attribute: the
         * handler's own attribute calls are not Fortran's. */
        locus_attr_from_fortran(LOCUS_ATTR_FORM_C);
        e->comm_fn(&h, &code, fn);
        return errclass;
    }
    err_fatal(errclass, fn);
    return errclass;
}

int locus_comm_create_errhandler_impl(MPI_Comm_errhandler_function *fn,
                                      MPI_Errhandler *errhandler)
{
    if (!fn)
        return MPI_ERR_ARG;
    locus_errh_t *e = calloc(1, sizeof *e);
    if (e && locus_handle_enter(e, LOCUS_HK_ERRH) < 0) {
        free(e);
        e = NULL;
    }
    if (!e)
        return MPI_ERR_NO_MEM;
    e->kind = ERRH_USER;
    e->refs = 1;
    e->comm_fn = fn;
    e->handle = (MPI_Errhandler)e;
    *errhandler = e->handle;
    return MPI_SUCCESS;
}

int locus_errhandler_free_impl(MPI_Errhandler *errhandler)
{
    /* MPI_ERRHANDLER_NULL is no handler. A predefined one may be "freed":
     * MPI_Comm_get_errhandler hands out a reference the program must free,
     * whatever handler it is (the handler itself stays). */
    locus_errh_t *e = locus_errh_of(*errhandler);
    if (!e)
        return MPI_ERR_ARG;
    locus_errh_drop(e);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* Used by communicator set-up and teardown. */
void locus_errh_set(locus_comm_t *c, locus_errh_t *e)
{
    locus_errh_hold(e);
    locus_errh_drop(c->errh);
    c->errh = e;
}

/* ---- argument checks ---- */

int locus_check_comm(const locus_comm_t *c)
{
    return locus_comm_valid(c) ? MPI_SUCCESS : MPI_ERR_COMM;
}

int locus_check_count(int count)
{
    return count < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
}

/* A NULL buffer is MPI_BOTTOM: valid with a type of absolute addresses
 * (its data starts past address 0), not with one whose data starts at
 * the buffer (true lower bound 0: every predefined type), as in MPICH. */
static int bad_null_buf(const void *buf, int count, locus_dtype_t *d)
{
    if (buf || count <= 0 || !d || locus_dtype_size(d) == 0)
        return 0;
    ptrdiff_t lb, ext;
    locus_dtype_true_extent(d, &lb, &ext);
    return lb == 0;
}

int locus_check_buf(const void *buf, int count, MPI_Datatype dt)
{
    return bad_null_buf(buf, count, locus_dt_of(dt)) ? MPI_ERR_BUFFER : MPI_SUCCESS;
}

int locus_check_root(const locus_comm_t *c, int root)
{
    return (root < 0 || root >= c->coll.size) ? MPI_ERR_ROOT : MPI_SUCCESS;
}

int locus_check_p2p(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                    const locus_comm_t *c, int is_recv)
{
    if (!locus_comm_valid(c))
        return MPI_ERR_COMM;
    if (count < 0)
        return MPI_ERR_COUNT;
    locus_dtype_t *d = locus_dt_of(dt);
    if (!d || !locus_dtype_is_committed(d))
        return MPI_ERR_TYPE;
    if (is_recv ? (tag < 0 && tag != MPI_ANY_TAG) : tag < 0)
        return MPI_ERR_TAG;
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= c->coll.size) &&
        !(is_recv && peer == MPI_ANY_SOURCE))
        return MPI_ERR_RANK;
    if (bad_null_buf(buf, count, d))
        return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}
