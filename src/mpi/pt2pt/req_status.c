/*
 * Statuses: looking at requests without completing them (MPI-4.1's
 * MPI_Request_get_status family), reading and writing MPI_Status
 * (counts, elements, MPI-4.1's field accessors, cancellation).
 */
#include <stdint.h>

#include "req_impl.h"

/* ---- MPI_Request_get_status* ------------------------------------------- */

LOCUS_PMPI_WEAK(Request_get_status)
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Request_get_status");
    if (!flag)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Request_get_status");
    locus_req_t *r;
    int err = req_test_begin(request, flag, status, &r, "MPI_Request_get_status");
    if (err != MPI_SUCCESS || !r || !*flag)
        return err;
    err = req_peek(r, status);
    return err ? locus_mpi_err(req_comm(r), err, "MPI_Request_get_status") : MPI_SUCCESS;
}

/* The argument checks and the progress round of the array forms. */
static int array_begin(int count, const MPI_Request reqs[], int args_ok, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int err = req_check_array(count, reqs);
    if (err == MPI_SUCCESS && !args_ok)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, fn);
    if (locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(req_array_comm(count, reqs), MPI_ERR_OTHER, fn);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Request_get_status_all)
int PMPI_Request_get_status_all(int count, const MPI_Request reqs[], int *flag,
                                MPI_Status statuses[])
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Request_get_status_all";
    int err = array_begin(count, reqs, flag != NULL, fn);
    if (err != MPI_SUCCESS)
        return err;
    *flag = 0;
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !req_done(locus_req_of(reqs[i])))
            return MPI_SUCCESS;
    *flag = 1;
    int err_any = 0;
    for (int i = 0; i < count; i++) {
        MPI_Status *s = statuses ? &statuses[i] : NULL;
        int e = MPI_SUCCESS;
        if (reqs[i] == MPI_REQUEST_NULL)
            locus_status_empty(s, MPI_ANY_SOURCE);
        else
            e = req_peek(locus_req_of(reqs[i]), s);
        req_status_error(statuses, i, e, &err_any);
    }
    return err_any ? locus_mpi_err(req_array_comm(count, reqs), MPI_ERR_IN_STATUS, fn)
                   : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Request_get_status_any)
int PMPI_Request_get_status_any(int count, const MPI_Request reqs[], int *index, int *flag,
                                MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Request_get_status_any";
    int err = array_begin(count, reqs, index && flag, fn);
    if (err != MPI_SUCCESS)
        return err;
    int i = req_find_done(count, reqs);
    *flag = i != -1;
    *index = i >= 0 ? i : MPI_UNDEFINED;
    if (i == -2)
        locus_status_empty(status, MPI_ANY_SOURCE);
    if (i < 0)
        return MPI_SUCCESS;
    locus_req_t *r = locus_req_of(reqs[i]);
    err = req_peek(r, status);
    return err ? locus_mpi_err(req_comm(r), err, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Request_get_status_some)
int PMPI_Request_get_status_some(int incount, const MPI_Request reqs[], int *outcount,
                                 int indices[], MPI_Status statuses[])
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Request_get_status_some";
    int err = array_begin(incount, reqs, outcount && (incount == 0 || indices), fn);
    if (err != MPI_SUCCESS)
        return err;
    int n = req_find_some(incount, reqs, indices), err_any = 0;
    for (int k = 0; k < n; k++)
        req_status_error(statuses, k,
                         req_peek(locus_req_of(reqs[indices[k]]), statuses ? &statuses[k] : NULL),
                         &err_any);
    *outcount = n < 0 ? MPI_UNDEFINED : n;
    return err_any ? locus_mpi_err(req_array_comm(incount, reqs), MPI_ERR_IN_STATUS, fn)
                   : MPI_SUCCESS;
}

/* ---- counts and elements ------------------------------------------------------ */

/* The engine type of a status call's datatype, or NULL (then *err set). */
static locus_dtype_t *status_type(const void *status, const void *out, MPI_Datatype dt,
                                  int *err)
{
    *err = !status || !out ? MPI_ERR_ARG : locus_check_dtype(dt);
    return *err == MPI_SUCCESS ? locus_dt_of(dt) : NULL;
}

/* Whole elements of dt in the status's bytes; MPI_UNDEFINED when not whole. */
static MPI_Count status_count(const MPI_Status *st, const locus_dtype_t *dt)
{
    size_t sz = locus_dtype_size(dt), bytes = locus_status_bytes(st);
    if (sz == 0)
        return bytes == 0 ? 0 : MPI_UNDEFINED;
    return bytes % sz ? MPI_UNDEFINED : (MPI_Count)(bytes / sz);
}

/* Basic elements of dt in the status's bytes; MPI_UNDEFINED when not whole. */
static MPI_Count status_elements(const MPI_Status *st, const locus_dtype_t *dt)
{
    long n = locus_dtype_count_elements(dt, locus_status_bytes(st));
    return n < 0 ? MPI_UNDEFINED : (MPI_Count)n;
}

/* MPI_Get_count and MPI_Get_elements (generated, with their _c and _x
 * forms: an int form gets MPI_UNDEFINED for a count that does not fit). */
static int status_count_of(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count,
                           int elements, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int err;
    locus_dtype_t *dt = status_type(status, count, datatype, &err);
    if (!dt)
        return locus_mpi_err(NULL, err, fn);
    *count = elements ? status_elements(status, dt) : status_count(status, dt);
    return MPI_SUCCESS;
}

int locus_get_count_impl(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count,
                         const char *fn)
{
    return status_count_of(status, datatype, count, 0, fn);
}

int locus_get_elements_impl(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count,
                            const char *fn)
{
    return status_count_of(status, datatype, count, 1, fn);
}

/*
 * The bytes that n basic elements of dt occupy in a message (the inverse
 * of locus_dtype_count_elements): whole types first, then the shortest
 * prefix of one more that holds the rest. -1 when n cannot be expressed.
 */
static int64_t elements_bytes(const locus_dtype_t *dt, MPI_Count n)
{
    size_t size = locus_dtype_size(dt);
    if (n == 0)
        return 0;
    long per = size ? locus_dtype_count_elements(dt, size) : 0;
    if (per <= 0)
        return -1;
    uint64_t whole = (uint64_t)n / (uint64_t)per, rest = (uint64_t)n % (uint64_t)per, b = 0;
    if (rest) {
        /* Exact at once for a type of one element kind; a mixed one is
         * searched from the smallest possible length (one byte each). */
        b = rest * size / (uint64_t)per;
        if (locus_dtype_count_elements(dt, b) != (long)rest)
            for (b = rest; b < size && locus_dtype_count_elements(dt, b) != (long)rest; b++)
                ;
        if (b >= size)
            return -1;
    }
    if (whole > (uint64_t)(INT64_MAX - b) / size)
        return -1;
    return (int64_t)(whole * size + b);
}

int locus_status_set_elements_impl(MPI_Status *status, MPI_Datatype datatype, MPI_Count count,
                                   const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int err;
    locus_dtype_t *dt = status_type(status, status, datatype, &err);
    if (!dt)
        return locus_mpi_err(NULL, err, fn);
    int64_t bytes = count < 0 ? -1 : elements_bytes(dt, count);
    if (bytes < 0)
        return locus_mpi_err(NULL, MPI_ERR_COUNT, fn);
    locus_status_set_bytes(status, (size_t)bytes);
    return MPI_SUCCESS;
}

/* ---- the public fields and cancellation (MPI-4.1 accessors) ------------------- */

#define STATUS_GET_FN(Name, EXPR)                                                   \
    LOCUS_PMPI_WEAK(Name)                                                           \
    int PMPI_##Name(const MPI_Status *status, int *out)                            \
    {                                                                               \
        LOCUS_ENTRY_CS();                                                           \
        LOCUS_CHECK_INIT("MPI_" #Name);                                             \
        if (!status || !out)                                                        \
            return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_" #Name);                  \
        *out = EXPR;                                                                \
        return MPI_SUCCESS;                                                         \
    }

#define STATUS_SET_FN(Name, LVALUE)                                                 \
    LOCUS_PMPI_WEAK(Name)                                                           \
    int PMPI_##Name(MPI_Status *status, int value)                                 \
    {                                                                               \
        LOCUS_ENTRY_CS();                                                           \
        LOCUS_CHECK_INIT("MPI_" #Name);                                             \
        if (!status)                                                                \
            return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_" #Name);                  \
        LVALUE = value;                                                             \
        return MPI_SUCCESS;                                                         \
    }

STATUS_GET_FN(Status_get_source, status->MPI_SOURCE)
STATUS_GET_FN(Status_get_tag, status->MPI_TAG)
STATUS_GET_FN(Status_get_error, status->MPI_ERROR)
STATUS_GET_FN(Test_cancelled, LOCUS_STATUS_CANCELLED(status) != 0)
STATUS_SET_FN(Status_set_source, status->MPI_SOURCE)
STATUS_SET_FN(Status_set_tag, status->MPI_TAG)
STATUS_SET_FN(Status_set_error, status->MPI_ERROR)
STATUS_SET_FN(Status_set_cancelled, LOCUS_STATUS_CANCELLED(status))
