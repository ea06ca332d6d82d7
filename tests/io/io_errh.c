/*
 * io_errh: file error handlers. MPI_FILE_NULL's handler is
 * MPI_ERRORS_RETURN at first, is settable, is what a failed open raises
 * and what a newly opened file starts with; a file's own handler gets the
 * file's handle and the error code; MPI_File_call_errhandler calls it.
 */
#include "iotest.h"

static int calls, last_code;
static MPI_File last_file;

static void handler(MPI_File *fh, int *code, ...)
{
    calls++;
    last_code = *code;
    last_file = *fh;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    iot_setup("errh");
    MPI_Errhandler e, mine;
    MPI_File fh;
    MPI_File_get_errhandler(MPI_FILE_NULL, &e);
    CHECK(e == MPI_ERRORS_RETURN, "FILE_NULL's default is ERRORS_RETURN");
    MPI_Errhandler_free(&e);

    CHECK(MPI_File_create_errhandler(handler, &mine) == MPI_SUCCESS, "create_errhandler");
    CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, mine) == MPI_SUCCESS, "set on FILE_NULL");
    /* a failed open raises on MPI_FILE_NULL */
    int err = MPI_File_open(MPI_COMM_WORLD, iot_path("no/such"), MPI_MODE_RDONLY, MPI_INFO_NULL,
                            &fh);
    CHECK(calls == 1 && last_file == MPI_FILE_NULL, "open error handled: %d calls", calls);
    CHECK(iot_class(err) == MPI_ERR_NO_SUCH_FILE && iot_class(last_code) == MPI_ERR_NO_SUCH_FILE,
          "class %d / %d", err, last_code);
    /* a new file inherits it */
    err = MPI_File_open(MPI_COMM_WORLD, iot_path("f"), MPI_MODE_CREATE | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh);
    CHECK(err == MPI_SUCCESS, "open");
    MPI_File_get_errhandler(fh, &e);
    CHECK(e == mine, "inherited handler");
    MPI_Errhandler_free(&e);
    char c;
    err = MPI_File_read_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    CHECK(iot_class(err) == MPI_ERR_ACCESS, "read on WRONLY: %d", err);
    CHECK(calls == 2 && last_file == fh, "file's handler called with the file");
    /* MPI_File_call_errhandler */
    MPI_File_call_errhandler(fh, MPI_ERR_IO);
    CHECK(calls == 3 && last_code == MPI_ERR_IO, "call_errhandler");
    /* back to ERRORS_RETURN on the file: no more calls */
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    err = MPI_File_read_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    CHECK(iot_class(err) == MPI_ERR_ACCESS && calls == 3, "ERRORS_RETURN");
    MPI_File_get_errhandler(fh, &e);
    CHECK(e == MPI_ERRORS_RETURN, "set on a file");
    MPI_Errhandler_free(&e);
    /* bad handles */
    CHECK(iot_class(MPI_File_set_errhandler(fh, MPI_ERRHANDLER_NULL)) == MPI_ERR_ARG,
          "ERRHANDLER_NULL");
    MPI_File stale = fh;
    MPI_File_close(&fh);
    CHECK(iot_class(MPI_File_set_errhandler(stale, mine)) == MPI_ERR_FILE, "closed file");
    CHECK(calls == 4, "FILE_NULL's handler saw the bad-file error: %d", calls);
    MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_OTHER);
    CHECK(calls == 5 && last_code == MPI_ERR_OTHER, "call on FILE_NULL");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&mine);
    MPI_File_delete(iot_path("f"), MPI_INFO_NULL); /* one rank deletes; the others see it gone */
    iot_cleanup();
    return mtest_finish();
}
