/*
 * io/io.h — the MPI-IO chapter: files over POSIX (file.c: open, close,
 * delete, sizes, queries, error handlers; file_info.c: hints), views and
 * data representations (file_view.c, file_datarep.c), independent access
 * with data sieving and byte-range locks (file_rw.c, file_indep.c),
 * collective access by two-phase aggregation (file_coll.c, file_all.c),
 * shared file pointers and ordered access (file_shared.c), and the
 * nonblocking and split forms (file_req.c). It lies above rma/ (the
 * shared pointer is a window) and comm/.
 *
 * ---- How an access runs ------------------------------------------------------
 * Every data access goes the same three steps:
 *   1. the memory side becomes a stream of bytes in the file's
 *      representation (io_pack / io_unpack: the datatype engine's pack,
 *      external32 encoding, or the user's conversion functions);
 *   2. the stream's place in the view -- a byte position in the view's
 *      data, the offset in etypes times the etype's file size -- becomes
 *      a list of file pieces (io_view_map: the filetype flattened once at
 *      MPI_File_set_view into runs, tiled by its extent);
 *   3. the pieces are read or written: by this process alone (io_pieces_read /
 *      io_pieces_write: data sieving for several small pieces, fcntl
 *      locks for read-modify-write and atomic mode), or together with the
 *      other ranks (io_coll: two-phase through aggregators).
 *
 * ---- Errors --------------------------------------------------------------------
 * Internal functions return MPI_SUCCESS or an MPI_ERR_* class and raise
 * nothing; the entry points raise through the file's error handler
 * (io_err), MPI_FILE_NULL's for calls on no file. A collective call
 * agrees on one error for all ranks before it returns, so a failure on one
 * rank never leaves the others waiting.
 *
 * One thread at a time (MPI_THREAD_SERIALIZED), like the rest of the layer.
 */
#ifndef LOCUS_MPI_IO_H
#define LOCUS_MPI_IO_H

#include <stddef.h>
#include <stdint.h>

#include "env/env.h"
#include "pt2pt/pt2pt.h"
#include "rma/rma.h"

#define LOCUS_FILE_MAGIC 0x4c46494cu

/* romio_cb_read / romio_cb_write */
enum { IO_CB_AUTO = 0, IO_CB_ENABLE, IO_CB_DISABLE };

/* The hints the file honours (MPI_File_get_info reports every one). */
typedef struct {
    int cb_read, cb_write;        /* IO_CB_*: two-phase for collective access */
    int cb_nodes;                 /* aggregators asked for (0: as cb_config_list says) */
    int cb_per_node;              /* from cb_config_list "*:N" (default 1) */
    size_t cb_buffer_size;        /* bytes an aggregator handles per round */
    int ds_read, ds_write;        /* IO_CB_*: data sieving of independent access */
    size_t ind_rd_buffer_size;    /* largest block sieved for a read */
    size_t ind_wr_buffer_size;    /* ... for a write (read-modify-write) */
    long striping_unit;           /* file domains aligned to it (0: none) */
    long striping_factor;         /* reported only (POSIX has no striping) */
} io_hints_t;

/* A data representation (file_datarep.c). */
typedef struct io_datarep io_datarep_t;

typedef struct locus_file locus_file_t;
struct locus_file {
    uint32_t magic;               /* LOCUS_FILE_MAGIC while the handle is valid */
    int fd;
    int fd_rw;                    /* fd was opened read-write (sieved writes can read) */
    int amode;
    char *name;
    locus_comm_t *comm;           /* private: own context, errors returned to us */
    locus_errh_t *errh;           /* the file's error handler (a reference) */
    io_hints_t hints;
    int *aggs, naggs;             /* aggregators (ranks of comm, ascending) */
    int *nic_of;                  /* [size] each rank's NIC as the placement named it
                                     (a hash of LOCUS_NIC; 0: not told) */
    int atomic;
    /* the view */
    MPI_Offset disp;
    locus_dtype_t *etype, *ftype; /* references held */
    const io_datarep_t *rep;
    size_t esize;                 /* bytes of one etype in the file */
    rma_run_t *runs;              /* the filetype's data in the file, in order */
    size_t nruns;
    uint64_t *run_pos;            /* [nruns+1]: data bytes before each run */
    uint64_t tile_data;           /* data bytes per filetype (file representation) */
    int64_t tile_ext;             /* file bytes per filetype */
    int dense;                    /* the view is the plain byte stream from disp */
    /* pointers, in etypes of the current view */
    MPI_Offset fp;
    MPI_Win shwin;                /* the shared pointer: a MPI_Offset at comm rank 0 */
    /* a split collective in progress */
    int split;
    int split_err;
    MPI_Status split_st;
    locus_file_t *next;           /* the list of open files */
};

/* ---- handles and errors (file.c) ------------------------------------------------- */
/* The open file of a handle, NULL when it is none. */
locus_file_t *locus_file_of(MPI_File h);
/* The start of a call on a file: f, or the call returns MPI_ERR_FILE. */
#define IO_FILE(f, fh, fn)                                                     \
    LOCUS_CHECK_INIT(fn);                                                      \
    locus_file_t *f = locus_file_of(fh);                                       \
    if (!f)                                                                    \
        return io_err(NULL, MPI_ERR_FILE, fn, "not an open file")
static inline MPI_File locus_file_handle(locus_file_t *f)
{
    return f ? (MPI_File)f : MPI_FILE_NULL;
}
/* Applies f's error handler (NULL: MPI_FILE_NULL's) to code raised in fn,
 * with `why` (printf format, may be NULL) as the detail a fatal handler
 * prints. Returns code. */
int io_err(locus_file_t *f, int code, const char *fn, const char *why, ...)
    __attribute__((format(printf, 4, 5)));
/* Where MPI_FILE_NULL's error handler is kept (file_ops.c sets it). */
locus_errh_t **io_null_errh_slot(void);
/* The MPI error class of an errno from a system call. */
int io_errno_class(int e);
/* Agrees over f's ranks on an error: the largest class any rank has (the
 * same on all), MPI_SUCCESS when none. Collective. */
int io_agree(locus_file_t *f, int err);

/* ---- hints (file_info.c) ----------------------------------------------------------- */
/* The defaults, then what info says (MPI_INFO_NULL: nothing). */
void io_hints_default(io_hints_t *h);
void io_hints_parse(io_hints_t *h, MPI_Info info);
/* Makes rank 0's hints everyone's, then chooses the aggregators.
 * Collective. */
int io_hints_agree(locus_file_t *f);
/* Learns every rank's NIC (f->nic_of; collective, at open). */
int io_nics_learn(locus_file_t *f);
/* The aggregators the hints, the nodes and the NICs give: f->aggs,
 * f->naggs. */
int io_aggs_choose(locus_file_t *f);
/* A new info object listing every hint's value in use. */
int io_hints_info(const locus_file_t *f, MPI_Info *out);

/* ---- views and data representations (file_view.c, file_datarep.c) ------------------ */
/* Installs a view (the default one: disp 0, MPI_BYTE, MPI_BYTE, "native").
 * MPI_ERR_TYPE for a filetype with negative or decreasing displacements,
 * MPI_ERR_UNSUPPORTED_DATAREP for an unknown representation. */
int io_view_set(locus_file_t *f, MPI_Offset disp, locus_dtype_t *etype, locus_dtype_t *ftype,
                const char *datarep);
void io_view_free(locus_file_t *f);
/* The file pieces of len stream bytes from view position pos (bytes of
 * view data): *pieces malloc'ed (NULL when len is 0), adjacent pieces
 * merged, in stream order (ascending offsets). MPI_ERR_NO_MEM. */
int io_view_map(const locus_file_t *f, uint64_t pos, uint64_t len, rma_run_t **pieces,
                size_t *npieces);
/* The view position (etypes) of the first etype at or after file byte off;
 * used for the end of file as a position. */
MPI_Offset io_view_etypes_before(const locus_file_t *f, MPI_Offset off);

/* The representations "native", "internal", "external32" and the user's. */
const io_datarep_t *io_datarep_find(const char *name);
const char *io_datarep_name(const io_datarep_t *r);
/* Bytes in the file of one element of dt (MPI_File_get_type_extent's
 * extent for a basic type), and of count x dt's data. */
int io_type_file_extent(const io_datarep_t *r, locus_dtype_t *dt, MPI_Aint *extent);
int io_data_file_size(const io_datarep_t *r, locus_dtype_t *dt, size_t count, uint64_t *bytes);
/* Memory <-> stream in f's representation. io_pack: *stream is buf itself
 * (*owned 0) when no conversion is needed, else malloc'ed. io_unpack
 * takes got stream bytes (whole elements are delivered) and gives the
 * memory bytes delivered (*mem_bytes, for the status). MPI error class. */
int io_pack(const locus_file_t *f, const void *buf, size_t count, locus_dtype_t *dt,
            char **stream, uint64_t *len, int *owned);
int io_stream_alloc(const locus_file_t *f, void *buf, size_t count, locus_dtype_t *dt,
                    char **stream, uint64_t *len, int *owned);
int io_unpack(const locus_file_t *f, void *buf, size_t count, locus_dtype_t *dt, char *stream,
              int owned, uint64_t got, size_t *mem_bytes);
/* Frees the user representations at MPI_Finalize. */
void io_datarep_finalize(void);
/* Frees the buffers two-phase I/O keeps between calls, at MPI_Finalize. */
void io_coll_finalize(void);

/* ---- moving the pieces (file_rw.c) --------------------------------------------------- */
/* Reads / writes the pieces from / to the stream, by this process alone:
 * one system call per piece, or sieved (one covering block per group of
 * small pieces: read then copied out; or read, patched and written back
 * under a write lock). *got: stream bytes read before the end of file.
 * MPI error class. */
int io_pieces_read(locus_file_t *f, const rma_run_t *p, size_t n, char *stream, uint64_t *got);
int io_pieces_write(locus_file_t *f, const rma_run_t *p, size_t n, const char *stream);
/* fcntl byte-range locks (open-file-description locks where the kernel has
 * them): F_RDLCK / F_WRLCK / F_UNLCK over [off, off+len). */
int io_lock(locus_file_t *f, int type, int64_t off, int64_t len);
/* Stream bytes of the pieces that lie before file size `size`. */
uint64_t io_pieces_before(const rma_run_t *p, size_t n, int64_t size);

/* ---- accesses (file_indep.c, file_coll.c) ----------------------------------------------- */
/* The kinds of access: where the position comes from. */
enum { IO_AT = 0, IO_INDIV, IO_SHARED, IO_ORDERED };
/* One data access of count x dt at etype offset off (IO_AT; the others
 * take it from the pointer), independent or collective (`coll`: every
 * rank of f calls). err: an error the caller found already (a collective
 * still takes part, to agree on it). st may be NULL. MPI error class
 * (agreed when coll). */
int io_access(locus_file_t *f, int write, int kind, int coll, MPI_Offset off, void *buf,
              size_t count, locus_dtype_t *dt, MPI_Status *st, int err);
/* Collective I/O of this rank's pieces (every rank calls, err its error
 * so far): two-phase through the aggregators, or each rank alone when the
 * hints or the pattern say so. *got as io_pieces_read. MPI error class,
 * agreed. */
int io_coll(locus_file_t *f, int write, int err, const rma_run_t *p, size_t n, char *stream,
            uint64_t *got);
/* Where a seek goes (MPI_SEEK_SET/CUR/END from cur), in etypes. */
int io_seek_target(locus_file_t *f, MPI_Offset cur, MPI_Offset offset, int whence,
                   MPI_Offset *out);

/* ---- the shared pointer (file_shared.c) -------------------------------------------------- */
/* Made at open (collective; initial value init) / freed at close. */
int io_shared_open(locus_file_t *f, MPI_Offset init);
void io_shared_close(locus_file_t *f);
/* Fetches the shared pointer and adds add to it (atomic across ranks). */
int io_shared_fetch_add(locus_file_t *f, MPI_Offset add, MPI_Offset *old);
/* Sets it (called by one rank). */
int io_shared_set(locus_file_t *f, MPI_Offset v);

/* ---- requests (file_req.c) ------------------------------------------------------------- */
/* A request already complete with status st and error code err. */
int io_req_done(const MPI_Status *st, int err, MPI_Request *request);

/* Releases the default file error handler and the user representations,
 * at MPI_Finalize. */
void locus_file_finalize(void);

#endif
