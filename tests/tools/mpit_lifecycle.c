/*
 * MPI_T around MPI_Init and MPI_Finalize, in one process: it works before
 * MPI_Init and after MPI_Finalize, is reference counted, ends its
 * sessions at the last MPI_T_finalize; a counter started before MPI_Init
 * counts what follows and keeps its value after MPI_Finalize. Categories
 * (one per layer, the transports under one parent) hold every variable
 * exactly once; there are no event types, and every event call answers
 * as the standard says; one source (the monotonic clock).
 */
#include <string.h>

#include "tcheck.h"

#define MAXV 256

static void categories(void)
{
    int ncat = 0, ncvar = 0, npvar = 0;
    MPI_T_category_get_num(&ncat);
    MPI_T_cvar_get_num(&ncvar);
    MPI_T_pvar_get_num(&npvar);
    CHECK(ncat >= 8 && ncvar <= MAXV && npvar <= MAXV, "%d categories", ncat);
    int pseen[MAXV] = {0}, subcats = 0;
    for (int c = 0; c < ncat; c++) {
        char name[64], desc[512];
        int nl = sizeof name, dl = sizeof desc, nc, np, nsub, back = -1, idx[MAXV];
        CHECK(MPI_T_category_get_info(c, name, &nl, desc, &dl, &nc, &np, &nsub) ==
              MPI_SUCCESS && strncmp(name, "locus_", 6) == 0 && dl > 1, "category %d", c);
        CHECK(MPI_T_category_get_index(name, &back) == MPI_SUCCESS && back == c, "%s index",
              name);
        CHECK(MPI_T_category_get_pvars(c, np, idx) == MPI_SUCCESS, "%s pvars", name);
        for (int k = 0; k < np; k++)
            if (idx[k] >= 0 && idx[k] < MAXV)
                pseen[idx[k]]++;
        int ne = -1;
        CHECK(MPI_T_category_get_num_events(c, &ne) == MPI_SUCCESS && ne == 0, "events");
        CHECK(MPI_T_category_get_events(c, 0, NULL) == MPI_SUCCESS, "no events to list");
        if (strcmp(name, "locus_transport") == 0) {
            int sub[8];
            char sn[64];
            CHECK(nsub == 4 && MPI_T_category_get_categories(c, 4, sub) == MPI_SUCCESS,
                  "transport subcategories: %d", nsub);
            for (int k = 0; k < 4 && nsub == 4; k++) {
                int sl = sizeof sn;
                MPI_T_category_get_info(sub[k], sn, &sl, NULL, NULL, NULL, NULL, NULL);
                subcats += !strcmp(sn, "locus_self") || !strcmp(sn, "locus_shm") ||
                           !strcmp(sn, "locus_tcp") || !strcmp(sn, "locus_ofi");
            }
        }
    }
    CHECK(subcats == 4, "self, shm, tcp and ofi under locus_transport: %d", subcats);
    for (int i = 0; i < npvar; i++)
        CHECK(pseen[i] == 1, "pvar %d is in %d categories", i, pseen[i]);
    int x, stamp = -1;
    CHECK(MPI_T_category_get_index("locus_nothing", &x) == MPI_T_ERR_INVALID_NAME, "bad name");
    CHECK(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
          MPI_T_ERR_INVALID_INDEX, "bad index");
    CHECK(MPI_T_category_get_cvars(0, -1, &x) == MPI_T_ERR_INVALID, "negative length");
    CHECK(MPI_T_category_changed(&stamp) == MPI_SUCCESS && stamp >= 0, "changed");
}

static void events_and_sources(void)
{
    int n = -1, idx;
    CHECK(MPI_T_event_get_num(&n) == MPI_SUCCESS && n == 0, "event types: %d", n);
    CHECK(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                               NULL) == MPI_T_ERR_INVALID_INDEX, "event info");
    CHECK(MPI_T_event_get_index("anything", &idx) == MPI_T_ERR_INVALID_NAME, "event index");
    MPI_T_event_registration reg = NULL;
    CHECK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg) == MPI_T_ERR_INVALID_INDEX,
          "event alloc");
    CHECK(MPI_T_event_handle_free(reg, NULL, NULL) == MPI_T_ERR_INVALID_HANDLE, "event free");
    CHECK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL) ==
          MPI_T_ERR_INVALID_HANDLE, "callback");
    MPI_Count ts;
    CHECK(MPI_T_event_get_timestamp(NULL, &ts) == MPI_T_ERR_INVALID_HANDLE, "instance");
    CHECK(MPI_T_event_read(NULL, 0, &ts) == MPI_T_ERR_INVALID_HANDLE, "read instance");

    CHECK(MPI_T_source_get_num(&n) == MPI_SUCCESS && n == 1, "sources: %d", n);
    char name[64];
    int len = sizeof name;
    MPI_T_source_order order;
    MPI_Count tps = 0, max = 0, t1 = 0, t2 = 0;
    MPI_Info info = MPI_INFO_NULL;
    CHECK(MPI_T_source_get_info(0, name, &len, NULL, NULL, &order, &tps, &max, &info) ==
          MPI_SUCCESS && order == MPI_T_SOURCE_ORDERED && tps == 1000000000 && max > 0,
          "source info");
    CHECK(MPI_T_source_get_timestamp(0, &t1) == MPI_SUCCESS &&
          MPI_T_source_get_timestamp(0, &t2) == MPI_SUCCESS && t2 >= t1 && t1 > 0, "clock");
    CHECK(MPI_T_source_get_timestamp(1, &t1) == MPI_T_ERR_INVALID_INDEX, "source 1");
}

int main(int argc, char **argv)
{
    int provided, n;
    CHECK(MPI_T_pvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "before MPI_T_init_thread");
    CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS &&
          provided == MPI_THREAD_SERIALIZED, "provided %d", provided);
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "second init");
    categories();
    events_and_sources();

    /* A counter started before MPI_Init counts from there. */
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int idx, count;
    unsigned long long v = 99;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_get_index("locus_self_msgs_sent", MPI_T_PVAR_CLASS_COUNTER, &idx);
    MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
    CHECK(MPI_T_pvar_start(s, h) == MPI_SUCCESS, "start before MPI_Init");
    CHECK(MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS && v == 0, "before MPI_Init: %llu", v);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    int x = 1, y;
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0, MPI_COMM_SELF,
                     MPI_STATUS_IGNORE);
    CHECK(MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS && v == 2, "two sends to oneself: %llu", v);
    MPI_Finalize();

    /* After MPI_Finalize: still there, the value kept. */
    CHECK(MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS && v == 2, "after MPI_Finalize: %llu", v);
    CHECK(MPI_T_cvar_get_num(&n) == MPI_SUCCESS && n > 0, "cvars after MPI_Finalize");
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "first finalize");
    CHECK(MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS, "one init left: the session lives");
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "second finalize");
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "third finalize");
    /* The last finalize ended the session. */
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    CHECK(MPI_T_pvar_read(s, h, &v) == MPI_T_ERR_INVALID_SESSION, "session after finalize");
    MPI_T_finalize();
    return tc_report_local();
}
