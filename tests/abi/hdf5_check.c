/*
 * hdf5_check.c -- parallel HDF5 on MPI-IO: a 2-D dataset of doubles, each
 * rank writing a block of rows collectively (H5FD_MPIO_COLLECTIVE), then
 * read back collectively by columns (another decomposition: every rank's
 * reads cross every writer's rows), and by rank 0 alone through HDF5's
 * POSIX driver (the file is a whole HDF5 file, not only what MPI-IO gives
 * back). Every value is checked. Built with h5pcc (Debian's
 * libhdf5-mpich-dev: MPICH's ABI), run under locusrun on Locus.
 * Usage: hdf5_check FILE [ROWS_PER_RANK COLS [KEY=VALUE]] (an MPI-IO hint
 * for the file, e.g. romio_cb_write=disable)
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors;

static double value(hsize_t r, hsize_t c)
{
    return (double)(r * 100003 + c) + 0.25;
}

static void fail(const char *what, int rank)
{
    fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
    errors++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: hdf5_check FILE [ROWS_PER_RANK COLS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *path = argv[1];
    hsize_t per = argc > 2 ? strtoull(argv[2], NULL, 10) : 64;
    hsize_t cols = argc > 3 ? strtoull(argv[3], NULL, 10) : 4096;
    hsize_t rows = per * (hsize_t)size, dims[2] = { rows, cols };

    /* Write: rows [rank*per, (rank+1)*per), collectively. */
    MPI_Info info = MPI_INFO_NULL;
    if (argc > 4 && strchr(argv[4], '=')) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(argv[4], '=') - argv[4]), argv[4]);
        MPI_Info_create(&info);
        MPI_Info_set(info, key, strchr(argv[4], '=') + 1);
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0)
        fail("H5Fcreate", rank);
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    hsize_t start[2] = { per * (hsize_t)rank, 0 }, count[2] = { per, cols };
    double *buf = malloc(per * cols * sizeof *buf);
    for (hsize_t r = 0; r < per; r++)
        for (hsize_t c = 0; c < cols; c++)
            buf[r * cols + c] = value(start[0] + r, c);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t mem = H5Screate_simple(2, count, NULL);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
    if (H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, xfer, buf) < 0)
        fail("H5Dwrite (collective)", rank);
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(dset);
    H5Fclose(file);
    free(buf);

    /* Read back by columns: rank k reads columns [k*cols/size, ...). */
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    dset = H5Dopen2(file, "grid", H5P_DEFAULT);
    space = H5Dget_space(dset);
    hsize_t c0 = cols * (hsize_t)rank / (hsize_t)size;
    hsize_t c1 = cols * (hsize_t)(rank + 1) / (hsize_t)size;
    hsize_t rstart[2] = { 0, c0 }, rcount[2] = { rows, c1 - c0 };
    buf = malloc((rows * (c1 - c0) + 1) * sizeof *buf);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, rstart, NULL, rcount, NULL);
    mem = H5Screate_simple(2, rcount, NULL);
    if (H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, xfer, buf) < 0)
        fail("H5Dread (collective)", rank);
    long bad = 0;
    for (hsize_t r = 0; r < rows; r++)
        for (hsize_t c = c0; c < c1; c++)
            bad += buf[r * (c1 - c0) + (c - c0)] != value(r, c);
    if (bad)
        fail("collective read by columns: values differ", rank);
    free(buf);
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(dset);
    H5Fclose(file);
    H5Pclose(xfer);
    H5Pclose(fapl);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Rank 0 alone, through the POSIX driver: the whole dataset. */
    if (rank == 0) {
        file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        dset = H5Dopen2(file, "grid", H5P_DEFAULT);
        buf = malloc(rows * cols * sizeof *buf);
        if (H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            fail("H5Dread (POSIX driver)", rank);
        bad = 0;
        for (hsize_t r = 0; r < rows; r++)
            for (hsize_t c = 0; c < cols; c++)
                bad += buf[r * cols + c] != value(r, c);
        if (bad)
            fail("serial read: values differ", rank);
        free(buf);
        H5Dclose(dset);
        H5Fclose(file);
    }
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all == 0)
            printf("%d ranks wrote and read a %llu x %llu dataset\n No Errors\n", size,
                   (unsigned long long)rows, (unsigned long long)cols);
        remove(path);
    }
    MPI_Finalize();
    return all != 0;
}
