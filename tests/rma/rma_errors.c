/*
 * Misuse of windows gets the right error class through the window's error
 * handler (MPI_ERRORS_RETURN, and a user handler called with the window),
 * and the window's attributes, name, hints and group are what MPI says.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

#define EXPECT(call, want)                                                            \
    do {                                                                              \
        int e_ = (call), c_ = -1;                                                     \
        MPI_Error_class(e_, &c_);                                                     \
        CHECK(c_ == (want), "%s: class %d, want %s (%d)", #call, c_, #want, want);   \
    } while (0)

static int handler_calls;
static MPI_Win handler_win;
static void win_handler(MPI_Win *w, int *code, ...)
{
    handler_calls++;
    handler_win = *w;
    (void)code;
}

static int deleted;
static int del_fn(MPI_Win w, int key, void *val, void *extra)
{
    (void)w;
    (void)key;
    (void)extra;
    deleted += *(int *)val;
    return MPI_SUCCESS;
}

static void misuse(void)
{
    int buf[16] = { 0 }, v = 1;
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size;

    /* synchronization */
    EXPECT(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Get(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush_local_all(win), MPI_ERR_RMA_SYNC);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    /* range, displacement, rank, lock type, assert, datatype, op */
    EXPECT(MPI_Put(&v, 1, MPI_INT, right, 16, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(buf, 2, MPI_INT, right, 15, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Get(&v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP);
    EXPECT(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Put(&v, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT(MPI_Put(&v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    EXPECT(MPI_Put(buf, 4, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_TRUNCATE);
    EXPECT(MPI_Accumulate(&v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    float f = 1;
    EXPECT(MPI_Accumulate(&f, 1, MPI_FLOAT, right, 0, 1, MPI_FLOAT, MPI_BAND, win), MPI_ERR_OP);
    EXPECT(MPI_Accumulate(&f, 1, MPI_FLOAT, right, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_TYPE);
    EXPECT(MPI_Compare_and_swap(&f, &f, &f, MPI_FLOAT, right, 0, win), MPI_ERR_TYPE);
    MPI_Op uop;
    MPI_Op_create((MPI_User_function *)(void (*)(void))win_handler, 1, &uop);
    EXPECT(MPI_Accumulate(&v, 1, MPI_INT, right, 0, 1, MPI_INT, uop, win), MPI_ERR_OP);
    MPI_Op_free(&uop);
    MPI_Win_unlock(right, win);
    EXPECT(MPI_Win_lock(3, right, 0, win), MPI_ERR_LOCKTYPE);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOSTORE, win), MPI_ERR_ASSERT);
    EXPECT(MPI_Win_fence(MPI_MODE_NOCHECK, win), MPI_ERR_ASSERT);
    EXPECT(MPI_Win_fence(0x1, win), MPI_ERR_ASSERT);
    /* flavor: MPI-4.1 lets any window but a dynamic one be queried; user
     * memory of another process is not load/store accessible (size 0) */
    MPI_Aint sz;
    int du;
    void *p;
    CHECK(MPI_Win_shared_query(win, rank, &sz, &du, &p) == MPI_SUCCESS && p == buf &&
              sz == sizeof buf && du == sizeof(int), "shared_query of my own create memory");
    if (size > 1)
        CHECK(MPI_Win_shared_query(win, right, &sz, &du, &p) == MPI_SUCCESS && p == NULL &&
                  sz == 0, "shared_query of a peer's create memory: %p %ld", p, (long)sz);
    EXPECT(MPI_Win_attach(win, buf, sizeof buf), MPI_ERR_RMA_FLAVOR);
    EXPECT(MPI_Win_detach(win, buf), MPI_ERR_RMA_FLAVOR);
    {
        MPI_Win dyn;
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
        MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
        EXPECT(MPI_Win_shared_query(dyn, 0, &sz, &du, &p), MPI_ERR_RMA_FLAVOR);
        MPI_Win_free(&dyn);
    }
    /* a PSCW epoch: start twice, fence inside */
    MPI_Group g;
    MPI_Win_get_group(win, &g);
    MPI_Win_post(g, 0, win);
    MPI_Win_start(g, 0, win);
    EXPECT(MPI_Win_start(g, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    MPI_Group_free(&g);
    /* a fence epoch with operations: no lock until it is closed */
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    /* the window is still fine */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    CHECK(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win) == MPI_SUCCESS, "put after errors");
    MPI_Win_unlock(right, win);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "freed handle not MPI_WIN_NULL");

    /* invalid windows and creation arguments (world: ERRORS_RETURN) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    EXPECT(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT(MPI_Win_free(&win), MPI_ERR_WIN);
    {
        char nm[MPI_MAX_OBJECT_NAME];
        int len;
        CHECK(MPI_Win_get_name(MPI_WIN_NULL, nm, &len) == MPI_SUCCESS &&
                  strcmp(nm, "MPI_WIN_NULL") == 0, "MPI_WIN_NULL's name");
    }
    /* MPI_PROC_NULL does nothing, whatever the datatypes */
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    CHECK(MPI_Get_accumulate(&v, 0, MPI_INT, &v, 0, MPI_INT, MPI_PROC_NULL, 0, 0,
                             MPI_DATATYPE_NULL, MPI_SUM, win) == MPI_SUCCESS,
          "get_accumulate to MPI_PROC_NULL");
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    EXPECT(MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    EXPECT(MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    EXPECT(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_NULL, &win), MPI_ERR_COMM);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void properties(void)
{
    int buf[10];
    MPI_Win win;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "false");
    MPI_Win_create(buf, sizeof buf, 4, info, MPI_COMM_WORLD, &win);
    MPI_Info_free(&info);
    void *base;
    MPI_Aint *psize;
    int *pdu, *pflavor, *pmodel, flag;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == buf, "MPI_WIN_BASE %p want %p", base, (void *)buf);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &psize, &flag);
    CHECK(flag && *psize == sizeof buf, "MPI_WIN_SIZE %ld", (long)*psize);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &pdu, &flag);
    CHECK(flag && *pdu == 4, "MPI_WIN_DISP_UNIT %d", *pdu);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &pflavor, &flag);
    CHECK(flag && *pflavor == MPI_WIN_FLAVOR_CREATE, "flavor %d", *pflavor);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &pmodel, &flag);
    CHECK(flag && *pmodel == MPI_WIN_UNIFIED, "model %d", *pmodel);

    /* user attributes, deleted at free */
    int key, val = 7, *got;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, NULL);
    MPI_Win_set_attr(win, key, &val);
    MPI_Win_get_attr(win, key, &got, &flag);
    CHECK(flag && got == &val, "user attribute not found");
    MPI_Win_delete_attr(win, key);
    CHECK(deleted == 7, "delete callback not called on delete");
    MPI_Win_get_attr(win, key, &got, &flag);
    CHECK(!flag, "deleted attribute still there");
    MPI_Win_set_attr(win, key, &val);

    /* name */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_get_name(win, name, &len);
    CHECK(len == 0, "default name '%s'", name);
    MPI_Win_set_name(win, "halo");
    MPI_Win_get_name(win, name, &len);
    CHECK(len == 4 && strcmp(name, "halo") == 0, "name '%s'", name);

    /* hints in use */
    MPI_Info used;
    char v[64];
    MPI_Win_get_info(win, &used);
    len = sizeof v;
    MPI_Info_get_string(used, "no_locks", &len, v, &flag);
    CHECK(flag && strcmp(v, "false") == 0, "no_locks hint '%s'", flag ? v : "(none)");
    len = sizeof v;
    MPI_Info_get_string(used, "accumulate_ordering", &len, v, &flag);
    CHECK(flag, "accumulate_ordering not reported");
    MPI_Win_set_info(win, used);
    MPI_Info_free(&used);

    /* group */
    MPI_Group wg, cg;
    int cmp;
    MPI_Win_get_group(win, &wg);
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(wg, cg, &cmp);
    CHECK(cmp == MPI_IDENT, "window group differs from the communicator's");
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);

    /* error handlers: a user one gets the window; get/set round trip */
    MPI_Errhandler eh, old;
    MPI_Win_create_errhandler(win_handler, &eh);
    MPI_Win_get_errhandler(win, &old);
    CHECK(old == MPI_ERRORS_ARE_FATAL, "default window handler is not MPI_ERRORS_ARE_FATAL");
    MPI_Win_set_errhandler(win, eh);
    MPI_Errhandler_free(&eh);
    int v1 = 0;
    int err = MPI_Put(&v1, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    CHECK(err == MPI_ERR_RMA_SYNC && handler_calls == 1 && handler_win == win,
          "user handler: err %d calls %d", err, handler_calls);
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK(handler_calls == 2, "MPI_Win_call_errhandler did not call the handler");
    MPI_Win_set_errhandler(win, old);
    MPI_Errhandler_free(&old);

    MPI_Win_free(&win);
    CHECK(deleted == 14, "delete callback not called at MPI_Win_free");
    MPI_Win_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "keyval not reset");

    /* dynamic and allocated windows' attributes */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &psize, &flag);
    CHECK(base == MPI_BOTTOM && *psize == 0, "dynamic window base %p size %ld", base,
          (long)*psize);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &pflavor, &flag);
    CHECK(*pflavor == MPI_WIN_FLAVOR_DYNAMIC, "dynamic flavor %d", *pflavor);
    MPI_Win_free(&win);
    double *mem;
    MPI_Win_allocate(80, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &pflavor, &flag);
    CHECK(base == mem && *pflavor == MPI_WIN_FLAVOR_ALLOCATE, "allocate: base/flavor");
    MPI_Win_free(&win);

    /* MPI_Alloc_mem */
    void *m = NULL;
    MPI_Alloc_mem(1000, MPI_INFO_NULL, &m);
    CHECK(m != NULL, "MPI_Alloc_mem gave NULL");
    memset(m, 1, 1000);
    MPI_Free_mem(m);
    MPI_Alloc_mem(0, MPI_INFO_NULL, &m);
    MPI_Free_mem(m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    misuse();
    properties();
    return mtest_finish();
}
