/*
 * io_open: opening and closing files collectively, the access modes, the
 * file's size and queries, and every error class of opening -- the same
 * class on every rank even when only one rank fails the system call.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "iotest.h"

static int size_of(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? (int)sb.st_size : -1;
}

/* Opens with amode on comm; returns the error class (0: success, closed again). */
static int try_open(MPI_Comm comm, const char *p, int amode)
{
    MPI_File fh = (MPI_File)0x1234;
    int err = MPI_File_open(comm, p, amode, MPI_INFO_NULL, &fh);
    if (err == MPI_SUCCESS)
        MPI_File_close(&fh);
    else
        CHECK(fh == MPI_FILE_NULL, "a failed open leaves MPI_FILE_NULL");
    return iot_class(err);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    iot_setup("open");
    const char *a = iot_path("a.dat");
    MPI_File fh;
    int err, amode, flag;

    /* create, size, preallocate, amode, group, info, sync */
    err = MPI_File_open(MPI_COMM_WORLD, a, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK(err == MPI_SUCCESS, "open create: %d", err);
    MPI_Offset sz = -1;
    MPI_File_get_size(fh, &sz);
    CHECK(sz == 0, "new file size %lld", (long long)sz);
    CHECK(MPI_File_set_size(fh, 1000) == MPI_SUCCESS, "set_size");
    MPI_File_get_size(fh, &sz);
    CHECK(sz == 1000, "size after set_size %lld", (long long)sz);
    CHECK(MPI_File_preallocate(fh, 500) == MPI_SUCCESS, "preallocate smaller");
    MPI_File_get_size(fh, &sz);
    CHECK(sz == 1000, "preallocate never shrinks: %lld", (long long)sz);
    CHECK(MPI_File_preallocate(fh, 4096) == MPI_SUCCESS, "preallocate");
    MPI_File_get_size(fh, &sz);
    CHECK(sz == 4096, "size after preallocate %lld", (long long)sz);
    CHECK(MPI_File_set_size(fh, 10) == MPI_SUCCESS, "shrink");
    MPI_File_get_size(fh, &sz);
    CHECK(sz == 10, "size after shrink %lld", (long long)sz);
    /* the same size on every rank is required */
    if (size > 1) {
        err = MPI_File_set_size(fh, rank == 1 ? 20 : 30);
        CHECK(iot_class(err) == MPI_ERR_NOT_SAME, "different sizes: %d", err);
    }
    CHECK(iot_class(MPI_File_set_size(fh, -1)) == MPI_ERR_ARG, "negative size");
    MPI_File_get_amode(fh, &amode);
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %d", amode);
    MPI_Group g, wg;
    MPI_File_get_group(fh, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int cmp;
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "group %d", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info info;
    CHECK(MPI_File_get_info(fh, &info) == MPI_SUCCESS, "get_info");
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && atoi(v) > 0, "cb_buffer_size listed");
    MPI_Info_get(info, "romio_cb_write", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && strcmp(v, "automatic") == 0, "romio_cb_write %s", flag ? v : "-");
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "65536");
    MPI_Info_set(info, "romio_cb_read", "disable");
    CHECK(MPI_File_set_info(fh, info) == MPI_SUCCESS, "set_info");
    MPI_Info_free(&info);
    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && strcmp(v, "65536") == 0, "cb_buffer_size now %s", flag ? v : "-");
    MPI_Info_get(info, "romio_cb_read", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && strcmp(v, "disable") == 0, "romio_cb_read now %s", flag ? v : "-");
    MPI_Info_free(&info);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS, "sync");
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 0, "not atomic by default");
    /* Fortran handles */
    MPI_Fint fi = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(fi) == fh, "c2f/f2c round trip");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == MPI_File_c2f(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL))),
          "FILE_NULL converts");
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS && fh == MPI_FILE_NULL, "close");
    /* a closed handle is no file */
    MPI_File stale = MPI_File_f2c(fi);
    CHECK(iot_class(MPI_File_get_size(stale, &sz)) == MPI_ERR_FILE, "closed handle");
    CHECK(iot_class(MPI_File_get_size(MPI_FILE_NULL, &sz)) == MPI_ERR_FILE, "FILE_NULL");

    /* the error classes of opening */
    CHECK(try_open(MPI_COMM_WORLD, iot_path("none/x"), MPI_MODE_RDONLY) == MPI_ERR_NO_SUCH_FILE,
          "missing folder");
    CHECK(try_open(MPI_COMM_WORLD, iot_path("missing"), MPI_MODE_RDONLY) == MPI_ERR_NO_SUCH_FILE,
          "missing file");
    CHECK(try_open(MPI_COMM_WORLD, a, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY) ==
              MPI_ERR_FILE_EXISTS, "EXCL on an existing file");
    CHECK(try_open(MPI_COMM_WORLD, a, MPI_MODE_RDONLY | MPI_MODE_WRONLY) == MPI_ERR_AMODE,
          "two access modes");
    CHECK(try_open(MPI_COMM_WORLD, a, MPI_MODE_CREATE) == MPI_ERR_AMODE, "no access mode");
    CHECK(try_open(MPI_COMM_WORLD, a, MPI_MODE_RDONLY | MPI_MODE_CREATE) == MPI_ERR_AMODE,
          "RDONLY with CREATE");
    CHECK(try_open(MPI_COMM_WORLD, a, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL) == MPI_ERR_AMODE,
          "RDWR with SEQUENTIAL");
    CHECK(try_open(MPI_COMM_WORLD, a, 1 << 20 | MPI_MODE_RDONLY) == MPI_ERR_AMODE, "unknown bit");
    if (size > 1)
        CHECK(try_open(MPI_COMM_WORLD, a, rank ? MPI_MODE_RDONLY : MPI_MODE_RDWR) ==
                  MPI_ERR_NOT_SAME, "different amodes");
    CHECK(try_open(MPI_COMM_WORLD, iot_dir, MPI_MODE_RDONLY) == MPI_ERR_BAD_FILE, "a folder");
    CHECK(try_open(MPI_COMM_WORLD, "", MPI_MODE_RDONLY) == MPI_ERR_BAD_FILE, "empty name");
    /* a read-only file opened for writing */
    const char *ro = iot_path("ro.dat");
    if (rank == 0) {
        int fd = open(ro, O_CREAT | O_WRONLY, 0444);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(try_open(MPI_COMM_WORLD, ro, MPI_MODE_WRONLY) == MPI_ERR_READ_ONLY, "read-only file");
    CHECK(try_open(MPI_COMM_WORLD, ro, MPI_MODE_RDONLY) == MPI_SUCCESS, "read-only file read");
    /* permission denied, on one rank only: every rank gets MPI_ERR_ACCESS.
     * Root passes permission checks: that rank drops to nobody for it. */
    const char *priv = iot_path("priv");
    if (rank == 0) {
        mkdir(priv, 0700);
        int fd = open(iot_path("priv/f"), O_CREAT | O_WRONLY, 0600);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int dropped = 0;
    if (rank == size - 1) {
        if (geteuid() == 0)
            dropped = seteuid(65534) == 0;
        if (geteuid() == 0)
            chmod(priv, 0); /* could not drop: nothing to show on this rank */
    }
    int cls = try_open(MPI_COMM_WORLD, iot_path("priv/f"), MPI_MODE_RDONLY);
    if (dropped)
        CHECK(seteuid(0) == 0, "back to root");
    int any = dropped || geteuid() != 0;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any)
        CHECK(cls == MPI_ERR_ACCESS, "permission denied on one rank: class %d", cls);
    if (rank == 0) {
        chmod(priv, 0700);
        unlink(iot_path("priv/f"));
    }

    /* EXCL creates once; DELETE_ON_CLOSE removes the file */
    const char *b = iot_path("b.dat");
    err = MPI_File_open(MPI_COMM_WORLD, b,
                        MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE |
                            MPI_MODE_UNIQUE_OPEN,
                        MPI_INFO_NULL, &fh);
    CHECK(err == MPI_SUCCESS, "EXCL create: %d", err);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(size_of(b) == -1, "DELETE_ON_CLOSE");

    /* APPEND: the pointers start at the end */
    err = MPI_File_open(MPI_COMM_WORLD, a, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh);
    CHECK(err == MPI_SUCCESS, "open append");
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 10, "append position %lld", (long long)pos);
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == 10, "append shared position %lld", (long long)pos);
    MPI_File_close(&fh);

    /* delete */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(MPI_File_delete(a, MPI_INFO_NULL) == MPI_SUCCESS, "delete");
        CHECK(size_of(a) == -1, "deleted");
        CHECK(iot_class(MPI_File_delete(a, MPI_INFO_NULL)) == MPI_ERR_NO_SUCH_FILE,
              "delete missing");
    }
    /* on MPI_COMM_SELF too, with a ufs: prefix */
    char pre[400];
    snprintf(pre, sizeof pre, "ufs:%s", iot_path("self.dat"));
    char mine[sizeof pre + 16];
    snprintf(mine, sizeof mine, "%s.%d", pre, rank);
    err = MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_CREATE | MPI_MODE_WRONLY |
                        MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    CHECK(err == MPI_SUCCESS, "open on SELF with prefix");
    MPI_File_close(&fh);
    CHECK(size_of(mine + 4) == -1, "gone");
    iot_cleanup();
    return mtest_finish();
}
