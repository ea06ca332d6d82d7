/*
 * Generalized requests (MPI_Grequest_start / MPI_Grequest_complete): the
 * standard's call order of the callbacks (query before free, free exactly
 * once, at completion when the request was freed first, query never then),
 * the cancel callback's `complete` flag, statuses built in the query with
 * the MPI-4.1 status setters (elements, cancelled, source, tag), error
 * codes from the query through MPI_Wait and MPI_Waitall
 * (MPI_ERR_IN_STATUS), MPI_Request_get_status leaving the request alone,
 * and generalized requests mixed with point-to-point ones in the array
 * calls. One rank is enough; every rank runs it.
 */
#include <string.h>

#include "mtest.h"

typedef struct {
    char log[64];       /* q = query, f = free, c/C = cancel (not) complete */
    int nlog;
    int query_rc;       /* what the query returns */
    int elements;       /* MPI_Status_set_elements count of MPI_INT */
} state_t;

static void note(state_t *s, char c)
{
    if (s->nlog < (int)sizeof s->log - 1)
        s->log[s->nlog++] = c;
    s->log[s->nlog] = '\0';
}

static int query_fn(void *extra, MPI_Status *st)
{
    state_t *s = extra;
    note(s, 'q');
    MPI_Status_set_elements(st, MPI_INT, s->elements);
    MPI_Status_set_cancelled(st, 0);
    MPI_Status_set_source(st, 3);
    MPI_Status_set_tag(st, 44);
    return s->query_rc;
}

static int free_fn(void *extra)
{
    note(extra, 'f');
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    note(extra, complete ? 'C' : 'c');
    return MPI_SUCCESS;
}

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* Wait: query, then free; the status is the query's. */
    state_t a = { .elements = 5 };
    MPI_Request rq;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &a, &rq);
    int flag = 1;
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag && a.nlog == 0, "incomplete Test: flag %d log %s", flag, a.log);
    MPI_Grequest_complete(rq);
    MPI_Status st;
    int rc = MPI_Wait(&rq, &st), cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(rc == MPI_SUCCESS && rq == MPI_REQUEST_NULL, "Wait rc %d", rc);
    CHECK(strcmp(a.log, "qf") == 0, "callbacks %s, want qf", a.log);
    CHECK(cnt == 5 && st.MPI_SOURCE == 3 && st.MPI_TAG == 44, "status count %d src %d tag %d",
          cnt, st.MPI_SOURCE, st.MPI_TAG);
    int v = -1;
    MPI_Status_get_source(&st, &v);
    CHECK(v == 3, "Status_get_source %d", v);
    MPI_Status_get_tag(&st, &v);
    CHECK(v == 44, "Status_get_tag %d", v);

    /* MPI_Request_get_status queries but does not free; then Test does. */
    state_t b = { .elements = 2 };
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &b, &rq);
    MPI_Request_get_status(rq, &flag, &st);
    CHECK(!flag && b.nlog == 0, "get_status before complete: flag %d log %s", flag, b.log);
    MPI_Grequest_complete(rq);
    MPI_Request_get_status(rq, &flag, &st);
    MPI_Request_get_status(rq, &flag, &st);
    CHECK(flag && rq != MPI_REQUEST_NULL && strcmp(b.log, "qq") == 0,
          "get_status twice: flag %d log %s", flag, b.log);
    MPI_Test(&rq, &flag, &st);
    CHECK(flag && rq == MPI_REQUEST_NULL && strcmp(b.log, "qqqf") == 0, "Test after: log %s",
          b.log);

    /* Freed before completion: free runs at MPI_Grequest_complete, the
     * query never. */
    state_t c = { 0 };
    MPI_Request keep;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &rq);
    keep = rq;
    MPI_Request_free(&rq);
    CHECK(rq == MPI_REQUEST_NULL && c.nlog == 0, "free before complete: log %s", c.log);
    MPI_Grequest_complete(keep);
    CHECK(strcmp(c.log, "f") == 0, "after complete: log %s", c.log);

    /* Freed after completion: free at once, no query. */
    state_t d = { 0 };
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &d, &rq);
    MPI_Grequest_complete(rq);
    MPI_Request_free(&rq);
    CHECK(strcmp(d.log, "f") == 0, "free after complete: log %s", d.log);

    /* Cancel: the flag says whether it was complete; the status the query
     * sets is what MPI_Test_cancelled reads. */
    state_t e = { .elements = 0 };
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &e, &rq);
    MPI_Cancel(&rq);
    MPI_Grequest_complete(rq);
    MPI_Cancel(&rq);
    MPI_Wait(&rq, &st);
    CHECK(strcmp(e.log, "cCqf") == 0, "cancel order: %s", e.log);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "not cancelled by the query, yet reported %d", flag);

    /* A query's error comes back from MPI_Wait, and from MPI_Waitall as
     * MPI_ERR_IN_STATUS with the code in that status; the other requests
     * of the array complete normally. */
    state_t f = { .query_rc = MPI_ERR_OTHER };
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &f, &rq);
    MPI_Grequest_complete(rq);
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(err_class(rc) == MPI_ERR_OTHER && strcmp(f.log, "qf") == 0, "Wait rc %d log %s", rc,
          f.log);
    state_t g = { .query_rc = MPI_ERR_INTERN }, h = { .elements = 1 };
    MPI_Request arr[4];
    int x = 42, y = 0;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &arr[0]);
    MPI_Irecv(&y, 1, MPI_INT, rank, 8, MPI_COMM_WORLD, &arr[1]);
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &h, &arr[2]);
    MPI_Isend(&x, 1, MPI_INT, rank, 8, MPI_COMM_WORLD, &arr[3]);
    MPI_Grequest_complete(arr[2]);
    int idx = -1;
    MPI_Waitany(4, arr, &idx, &st);
    CHECK(idx != 0, "Waitany picked the incomplete generalized request");
    MPI_Grequest_complete(arr[0]);
    MPI_Status sts[4];
    rc = MPI_Waitall(4, arr, sts);
    CHECK(err_class(rc) == MPI_ERR_IN_STATUS, "Waitall rc %d", rc);
    CHECK(sts[0].MPI_ERROR == MPI_ERR_INTERN, "status 0 error %d", sts[0].MPI_ERROR);
    for (int i = 1; i < 4; i++)
        CHECK(i == idx || sts[i].MPI_ERROR == MPI_SUCCESS, "status %d error %d", i,
              sts[i].MPI_ERROR);
    CHECK(y == 42 && strcmp(g.log, "qf") == 0 && strcmp(h.log, "qf") == 0,
          "y %d logs %s %s", y, g.log, h.log);

    /* Misuse. */
    rc = MPI_Grequest_complete(MPI_REQUEST_NULL);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "complete null: %d", rc);
    MPI_Irecv(&y, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &rq);
    rc = MPI_Grequest_complete(rq);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "complete of a receive: %d", rc);
    MPI_Cancel(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    state_t k = { 0 };
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &k, &rq);
    MPI_Grequest_complete(rq);
    rc = MPI_Grequest_complete(rq);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "complete twice: %d", rc);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    rc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, &k, NULL);
    CHECK(err_class(rc) == MPI_ERR_ARG, "start without request: %d", rc);
    return mtest_finish();
}
