/*
 * Built with a legacy MPI's compiler wrapper (mpicc.mpich, mpicc.openmpi)
 * and run by locusrun, so on Locus through its layer for that ABI: the
 * ABI's handles (MPICH's ints, Open MPI's object addresses), special values
 * and statuses (20 and 24 bytes) must all come through, and the user's
 * callbacks must see them too.
 * Prints the library's version and " No Errors" (rank 0).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs, handler_calls, handler_class, deletes;
static MPI_Comm handler_comm;

/* A user reduction: the larger magnitude, keeping its sign. */
static void absmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout, sz;
    MPI_Type_size(*dt, &sz);
    for (int i = 0; i < *len && sz == (int)sizeof(int); i++)
        if (abs(a[i]) > abs(b[i]))
            b[i] = a[i];
}

static void on_error(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_comm = *comm;
    MPI_Error_class(*code, &handler_class);
}

static int win_handler_calls, win_handler_class;
static void on_win_error(MPI_Win *win, int *code, ...)
{
    (void)win;
    win_handler_calls++;
    MPI_Error_class(*code, &win_handler_class);
}

static int copy_plus_one(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    *(long *)out = (long)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)val;
    deletes += *(int *)extra;
    return MPI_SUCCESS;
}
#define CHECK(c, ...) do { if (!(c)) { errs++; printf("check failed: %s: ", #c); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    CHECK(provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SERIALIZED ||
          provided == MPI_THREAD_SINGLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* The tool interface's variables are each library's own: what Locus's
     * must say is checked on Locus only. */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen, on_locus;
    MPI_Get_library_version(lib, &liblen);
    on_locus = strstr(lib, "Locus MPI") != NULL;
    if (rank == 0)
        printf("library: %.*s\n", (int)strcspn(lib, "\n"), lib);
    /* Point-to-point around a ring, received from MPI_ANY_SOURCE with
     * MPI_ANY_TAG: the status names the sender, tag and count. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double out[5] = {rank, rank + .5, 2, 3, 4}, in[5] = {0};
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Irecv(in, 5, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(out, 3, MPI_DOUBLE, right, 40 + rank, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, st);
    int count = -1;
    MPI_Get_count(&st[0], MPI_DOUBLE, &count);
    CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 40 + left && count == 3 &&
          in[1] == left + .5, "source %d tag %d count %d", st[0].MPI_SOURCE, st[0].MPI_TAG, count);
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "requests not nulled");
    /* MPI_PROC_NULL: completes at once, empty status. */
    MPI_Status sn;
    sn.MPI_ERROR = MPI_ERR_DIMS;   /* a one-status call leaves MPI_ERROR alone */
    MPI_Recv(in, 5, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &sn);
    MPI_Get_count(&sn, MPI_DOUBLE, &count);
    CHECK(sn.MPI_SOURCE == MPI_PROC_NULL && sn.MPI_TAG == MPI_ANY_TAG && count == 0 &&
          sn.MPI_ERROR == MPI_ERR_DIMS, "proc_null status %d %d %d error %d", sn.MPI_SOURCE,
          sn.MPI_TAG, count, sn.MPI_ERROR);
    MPI_Send(out, 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD);
    MPI_Recv(in, 1, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* Collectives, MPI_IN_PLACE included. */
    int sum = rank;
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);
    long mx = rank;
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &mx, &mx, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    CHECK(rank != 0 || mx == size - 1, "reduce max %ld", mx);
    /* New communicators and groups, compared. */
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int res, hsize, hrank;
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &res);
    CHECK(res == MPI_CONGRUENT, "compare dup %d", res);
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res);
    CHECK(res == MPI_IDENT, "compare self %d", res);
    MPI_Comm_size(half, &hsize);
    MPI_Comm_rank(half, &hrank);
    CHECK(hsize == (size + 1 - rank % 2) / 2 && hrank == (hsize - 1 - rank / 2),
          "split: size %d rank %d", hsize, hrank);
    MPI_Group g;
    int gsize;
    MPI_Comm_group(half, &g);
    MPI_Group_size(g, &gsize);
    CHECK(gsize == hsize, "group size %d", gsize);
    MPI_Group_free(&g);
    CHECK(g == MPI_GROUP_NULL, "group not nulled");
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL, "comm not nulled");
    /* A derived type. */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int pr[2] = {rank, -rank}, pl[2];
    MPI_Sendrecv(pr, 1, pair, right, 1, pl, 1, pair, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(pl[0] == left && pl[1] == -left, "pair %d %d", pl[0], pl[1]);
    MPI_Type_free(&pair);
    /* Predefined attributes by MPICH's keyvals; a topology's kind. */
    int *tag_ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && tag_ub && *tag_ub >= 32767, "MPI_TAG_UB: flag %d", flag);
    MPI_Comm cart;
    int dims[1] = {size}, periods[1] = {1}, kind = -1, src, dst;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Topo_test(cart, &kind);
    CHECK(kind == MPI_CART, "topo kind %d, want MPI_CART %d", kind, MPI_CART);
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    CHECK(src == left && dst == right, "cart shift %d %d", src, dst);
    MPI_Comm_free(&cart);
    MPI_Topo_test(MPI_COMM_WORLD, &kind);
    CHECK(kind == MPI_UNDEFINED, "world topo kind %d", kind);
    /* Alltoallw, blocking and nonblocking, with a type per peer. */
    {
        int sb[64], rb[64], sc[16], sd[16], rcn[16], rd[16];
        MPI_Datatype ty[16];
        for (int i = 0; i < size && i < 16; i++) {
            sb[i] = rank * 100 + i;
            sc[i] = rcn[i] = 1;
            sd[i] = rd[i] = i * (int)sizeof(int);
            ty[i] = MPI_INT;
        }
        MPI_Request wr;
        for (int form = 0; form < 2; form++) {
            memset(rb, -1, sizeof rb);
            if (form == 0) {
                MPI_Alltoallw(sb, sc, sd, ty, rb, rcn, rd, ty, MPI_COMM_WORLD);
            } else {
                MPI_Ialltoallw(sb, sc, sd, ty, rb, rcn, rd, ty, MPI_COMM_WORLD, &wr);
                MPI_Wait(&wr, MPI_STATUS_IGNORE);
            }
            for (int i = 0; i < size && i < 16; i++)
                CHECK(rb[i] == i * 100 + rank, "alltoallw form %d: from %d got %d", form, i, rb[i]);
        }
    }
#if defined(MPICH_VERSION)
    /* MPI-1's removed calls, which old binaries still make (Open MPI's
     * header refuses them at compile time; its library exports them). */
    {
        MPI_Aint ext = 0, lb = -1, ub = 0, a0, a1;
        double two[2];
        MPI_Address(&two[0], &a0);
        MPI_Address(&two[1], &a1);
        CHECK(a1 - a0 == (MPI_Aint)sizeof(double), "MPI_Address: %ld", (long)(a1 - a0));
        MPI_Type_extent(MPI_DOUBLE, &ext);
        MPI_Type_lb(MPI_DOUBLE, &lb);
        MPI_Type_ub(MPI_DOUBLE, &ub);
        CHECK(ext == 8 && lb == 0 && ub == 8, "extent %ld lb %ld ub %ld", (long)ext, (long)lb,
              (long)ub);
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, 8};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st;
        MPI_Type_struct(2, bl, disp, types, &st);
        MPI_Type_commit(&st);
        MPI_Type_extent(st, &ext);
        CHECK(ext == 16, "struct extent %ld", (long)ext);
        MPI_Type_free(&st);
        MPI_Errhandler eh0;
        MPI_Errhandler_get(MPI_COMM_WORLD, &eh0);
        MPI_Errhandler_set(MPI_COMM_WORLD, eh0);
        MPI_Errhandler_free(&eh0);
        CHECK(MPI_Pcontrol(1) == MPI_SUCCESS, "MPI_Pcontrol");
    }
#endif
    /* Matched probe and receive: a message handle, then its status. */
    {
        int v = rank * 3, w = -1, cnt = -1;
        MPI_Message msg;
        MPI_Status ms;
        MPI_Send(&v, 1, MPI_INT, right, 55, MPI_COMM_WORLD);
        ms.MPI_ERROR = MPI_ERR_DIMS;
        MPI_Mprobe(left, 55, MPI_COMM_WORLD, &msg, &ms);
        MPI_Mrecv(&w, 1, MPI_INT, &msg, &ms);
        MPI_Get_count(&ms, MPI_INT, &cnt);
        CHECK(w == left * 3 && msg == MPI_MESSAGE_NULL && ms.MPI_SOURCE == left && cnt == 1 &&
              ms.MPI_ERROR == MPI_ERR_DIMS, "mprobe/mrecv: %d from %d, count %d, error %d", w,
              ms.MPI_SOURCE, cnt, ms.MPI_ERROR);
    }
    /* Info keys and values, and a status set by hand. */
    {
        MPI_Info info;
        char key[MPI_MAX_INFO_KEY + 1], val[32];
        int nkeys = 0, vflag = 0;
        MPI_Info_create(&info);
        MPI_Info_set(info, "locus_key", "forty-two");
        MPI_Info_get_nkeys(info, &nkeys);
        MPI_Info_get_nthkey(info, 0, key);
        MPI_Info_get(info, "locus_key", sizeof val - 1, val, &vflag);
        CHECK(nkeys == 1 && !strcmp(key, "locus_key") && vflag && !strcmp(val, "forty-two"),
              "info: %d keys, %s=%s", nkeys, key, val);
        MPI_Info_free(&info);
        CHECK(info == MPI_INFO_NULL, "info not nulled");
        MPI_Status ss;
        int elems = -1;
        MPI_Status_set_elements(&ss, MPI_DOUBLE, 7);
        MPI_Get_elements(&ss, MPI_DOUBLE, &elems);
        CHECK(elems == 7, "status set elements: %d", elems);
    }
    /* One-sided: a window, fences with asserts, a put, a locked get. */
    {
        int wbuf[4] = {-1, -1, -1, -1}, mine = rank + 500, got = -1, wflag = 0;
        void *base = NULL;
        MPI_Win win;
        MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &wflag);
        CHECK(wflag && base == (void *)wbuf, "MPI_WIN_BASE %p, want %p", base, (void *)wbuf);
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        MPI_Put(&mine, 1, MPI_INT, right, 1, 1, MPI_INT, win);
        MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win);
        CHECK(wbuf[1] == left + 500, "put: %d, want %d", wbuf[1], left + 500);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, left, MPI_MODE_NOCHECK, win);
        MPI_Get(&got, 1, MPI_INT, left, 1, 1, MPI_INT, win);
        MPI_Win_unlock(left, win);
        CHECK(got == (left + size - 1) % size + 500, "locked get: %d", got);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_free(&win);
        CHECK(win == MPI_WIN_NULL, "window not nulled");
    }
    /* A user reduction, called with MPICH's datatype handle. */
    MPI_Op op;
    MPI_Op_create(absmax, 1, &op);
    int v = rank % 2 ? -(rank + 10) : rank, best = 0;
    MPI_Allreduce(&v, &best, 1, MPI_INT, op, MPI_COMM_WORLD);
    int want = 0;
    for (int r = 0; r < size; r++)
        if (abs(r % 2 ? -(r + 10) : r) > abs(want))
            want = r % 2 ? -(r + 10) : r;
    CHECK(best == want, "user op: %d, want %d", best, want);
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "op not nulled");
    /* Attributes with the user's copy and delete functions, and DUP_FN. */
    int kv, kv2, one = 1;
    MPI_Comm_create_keyval(copy_plus_one, count_delete, &kv, &one);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv2, NULL);
    MPI_Comm base, copy;
    MPI_Comm_dup(MPI_COMM_WORLD, &base);
    MPI_Comm_set_attr(base, kv, (void *)41L);
    MPI_Comm_set_attr(base, kv2, (void *)7L);
    MPI_Comm_dup(base, &copy);
    long *got = NULL;
    MPI_Comm_get_attr(copy, kv, &got, &flag);
    CHECK(flag && (long)got == 42, "copied attribute %ld", (long)got);
    MPI_Comm_get_attr(copy, kv2, &got, &flag);
    CHECK(flag && (long)got == 7, "dup_fn attribute %ld", (long)got);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&base);
    CHECK(deletes == 2, "delete callbacks %d, want 2", deletes);
    MPI_Comm_free_keyval(&kv);
    MPI_Comm_free_keyval(&kv2);
    CHECK(kv == MPI_KEYVAL_INVALID, "keyval not invalidated");
    /* A user error handler sees MPICH's communicator and class. */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Send(out, 1, MPI_DOUBLE, size + 7, 0, MPI_COMM_WORLD);
    CHECK(handler_calls == 1 && handler_comm == MPI_COMM_WORLD && handler_class == MPI_ERR_RANK,
          "handler: %d calls, class %d", handler_calls, handler_class);
    MPI_Errhandler_free(&eh);
    /* Errors come back as MPICH's classes under MPI_ERRORS_RETURN. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(out, 1, MPI_DOUBLE, size + 5, 0, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "bad rank: class %d, want %d", cls, MPI_ERR_RANK);
    rc = MPI_Send(out, -1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "bad count: class %d, want %d", cls, MPI_ERR_COUNT);
    /* A spawn that fails says why in the ABI's classes, its error codes
     * too (on Locus: the peers' own spawn needs their own launchers). */
    if (on_locus) {
        MPI_Comm kids = MPI_COMM_NULL;
        int codes[2] = { -1, -1 };
        rc = MPI_Comm_spawn("/nonexistent/locus-legacy-spawn", MPI_ARGV_NULL, 2, MPI_INFO_NULL,
                            0, MPI_COMM_WORLD, &kids, codes);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN && kids == MPI_COMM_NULL, "failed spawn: class %d, want %d",
              cls, MPI_ERR_SPAWN);
        if (rank == 0)
            CHECK(codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN,
                  "failed spawn's error codes %d %d, want %d", codes[0], codes[1],
                  MPI_ERR_SPAWN);
    }
    /* A user's error class and code: the ABI's numbers past its
     * MPI_ERR_LASTCODE, the code's class its class, its string its own. */
    int uclass, ucode, lastused = 0, *lastp = NULL, slen;
    char ustr[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&uclass);
    MPI_Add_error_code(uclass, &ucode);
    MPI_Add_error_string(ucode, "locus legacy check's own code");
    MPI_Error_class(ucode, &cls);
    MPI_Error_string(ucode, ustr, &slen);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag);
    if (flag)
        lastused = *lastp;
    CHECK(uclass > MPI_ERR_LASTCODE && ucode > uclass && cls == uclass && lastused >= uclass &&
          !strcmp(ustr, "locus legacy check's own code"),
          "user class %d code %d (class %d, last used %d, '%s')", uclass, ucode, cls, lastused,
          ustr);
    /* A window's own error handler sees the ABI's class. */
    MPI_Win ewin;
    double wbuf[2];
    MPI_Win_create(wbuf, sizeof wbuf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &ewin);
    MPI_Errhandler weh;
    MPI_Win_create_errhandler(on_win_error, &weh);
    MPI_Win_set_errhandler(ewin, weh);
    MPI_Win_fence(0, ewin);
    MPI_Put(out, 1, MPI_DOUBLE, size + 3, 0, 1, MPI_DOUBLE, ewin);
    MPI_Win_fence(0, ewin);
    CHECK(win_handler_calls == 1 && win_handler_class == MPI_ERR_RANK,
          "window handler: %d calls, class %d", win_handler_calls, win_handler_class);
    MPI_Errhandler_free(&weh);
    MPI_Win_free(&ewin);
    /* The large-count forms (MPI-4's _c), where the ABI's header has them. */
#if MPI_VERSION >= 4
    MPI_Count big = 0;
    MPI_Type_size_c(MPI_DOUBLE, &big);
    CHECK(big == (MPI_Count)sizeof(double), "MPI_Type_size_c %lld", (long long)big);
#endif
    /* The tool interface: its variables listed, their names and classes. */
    int tprovided, ncvar = 0, npvar = 0, ncat = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &tprovided);
    rc = MPI_T_cvar_get_num(&ncvar);
    CHECK(rc == MPI_SUCCESS && ncvar > 0, "MPI_T_cvar_get_num: %d, %d", rc, ncvar);
    for (int i = 0; on_locus && i < ncvar; i++) {
        char name[256], desc[1024];
        int nlen = sizeof name, dlen = sizeof desc, verb = -1, bind = -1, scope = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum en;
        rc = MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope);
        CHECK(rc == MPI_SUCCESS && nlen > 0 && dt != MPI_DATATYPE_NULL &&
              verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL &&
              bind == MPI_T_BIND_NO_OBJECT,
              "cvar %d: rc %d name '%s' verbosity %d bind %d", i, rc, name, verb, bind);
    }
    MPI_T_pvar_get_num(&npvar);
    MPI_T_category_get_num(&ncat);
    rc = MPI_T_cvar_get_info(ncvar + 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CHECK(!on_locus || rc == MPI_T_ERR_INVALID_INDEX, "cvar past the last: %d, want %d", rc,
          MPI_T_ERR_INVALID_INDEX);
    MPI_T_finalize();
    if (rank == 0)
        printf("MPI_T: %d control variables, %d performance variables, %d categories\n", ncvar,
               npvar, ncat);
    int total;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
    MPI_Finalize();
    return 0;
}
