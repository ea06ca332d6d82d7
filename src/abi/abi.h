/*
 * abi.h — the legacy-ABI layers' contract: libraries with a legacy ABI's
 * sonames over Locus's library, so programs built against that MPI run on
 * Locus unchanged. One folder per ABI (mpich: libmpich.so.12 and
 * libmpi.so.12, for MPICH, Intel MPI, MVAPICH and Cray MPICH binaries), its
 * abi_layer.h including that ABI's mpi.h, then this file; ../common is
 * compiled into each layer.
 *
 * A layer compiles against its ABI's own mpi.h: the entry points have the
 * ABI's prototypes and see its values. Locus's
 * library is loaded beside it (dlopen, RTLD_LOCAL | RTLD_DEEPBIND, so its
 * own calls stay inside it) and reached only through abi_fn, its PMPI_
 * functions by the names in abi_fn_names; Locus's handles are opaque
 * pointers here and its values are numbers the generator read from its
 * mpi.h (src/api/gen_abi.py writes abi_mpich_gen.c).
 *
 * Handles convert in the ABI's folder (MPICH's are ints: a predefined one
 * maps through abi_predef, any other is Locus's MPI_<Kind>_toint of the
 * object, from 4096, never one of MPICH's predefined values, above
 * 0x04000000). Ranks and tags with special values, MPI_IN_PLACE, thread
 * levels, comparison results and split types map by value; a status goes
 * through Locus's 32 bytes and comes back in the ABI's layout (the
 * folder's); error codes come back as the ABI's error classes.
 */
#ifndef LOCUS_ABI_H
#define LOCUS_ABI_H

/* The ABI's mpi.h and ABI_NAME come first (abi_layer.h). */
#include <stddef.h>
#include <stdint.h>

/* Locus's MPI_Status (the MPI-5 ABI's 32 bytes). Its library ints hold
 * the bytes received (two halves) and the cancelled flag, where
 * src/mpi/mpi_impl.h's locus_status_* put them. */
typedef struct {
    int source, tag, error, internal[5];
} abi_locus_status_t;
enum { ABI_STATUS_BYTES_LO = 0, ABI_STATUS_BYTES_HI = 1, ABI_STATUS_CANCELLED = 2 };
/* A status's source (or error) before a call: still there after it, Locus
 * left the status (that field) alone, and so does the layer with the
 * program's. */
#define ABI_STATUS_UNSET (-0x7fffffff - 1)

/* The kinds of handles: a legacy value may name two of them (MPICH's
 * MPI_MESSAGE_NULL is its MPI_REQUEST_NULL). */
enum abi_kind { ABI_K_COMM, ABI_K_TYPE, ABI_K_GROUP, ABI_K_OP, ABI_K_REQ, ABI_K_ERRH, ABI_K_INFO,
                ABI_K_WIN, ABI_K_MSG, ABI_K_SESSION, ABI_K_FILE };

typedef struct {
    intptr_t legacy; /* the value in the legacy ABI (an int, or an object's address) */
    int locus;       /* the value in Locus's */
    int kind;        /* a handle's abi_kind */
} abi_pair_t;

/* Locus's functions the hand-written part calls itself (filled at load). */
typedef struct {
    int (*comm_toint)(void *), (*type_toint)(void *), (*group_toint)(void *),
        (*op_toint)(void *), (*req_toint)(void *), (*errh_toint)(void *), (*info_toint)(void *);
    void *(*comm_fromint)(int), *(*type_fromint)(int), *(*group_fromint)(int),
        *(*op_fromint)(int), *(*req_fromint)(int), *(*errh_fromint)(int), *(*info_fromint)(int);
    int (*msg_toint)(void *), (*win_toint)(void *), (*file_toint)(void *),
        (*session_toint)(void *);
    void *(*msg_fromint)(int), *(*win_fromint)(int), *(*file_fromint)(int),
        *(*session_fromint)(int);
    int (*win_get_name)(void *, char *, int *);
    int (*open_port)(void *, char *), (*lookup_name)(const char *, void *, char *);
    int (*file_get_view)(void *, MPI_Offset *, void **, void **, char *);
    int (*win_set_name)(void *, const char *);
    int (*info_get_nthkey)(void *, int, char *);
    int (*error_class)(int, int *);
    int (*get_count_c)(const void *, void *, MPI_Count *);
    int (*get_elements_c)(const void *, void *, MPI_Count *);
    int (*test_cancelled)(const void *, int *);
    int (*processor_name)(char *, int *);
    int (*library_version)(char *, int *);
    int (*error_string)(int, char *, int *);
    int (*comm_get_name)(void *, char *, int *);
    int (*comm_set_name)(void *, const char *);
    int (*type_get_name)(void *, char *, int *);
    int (*type_set_name)(void *, const char *);
    double (*wtime)(void), (*wtick)(void);
    int (*op_create)(void *, int, void **), (*op_create_c)(void *, int, void **);
    int (*op_free)(void **);
    /* MPI_<Kind>_create_errhandler, by abi_errh_kind. */
    int (*create_errhandler[4])(void *, void **);
    int (*info_create_env)(int, char **, void **);
    int (*abi_get_fortran_info)(void **);
    int (*comm_create_keyval)(void *, void *, int *, void *), (*comm_free_keyval)(int *);
    int (*type_create_keyval)(void *, void *, int *, void *), (*type_free_keyval)(int *);
    int (*win_create_keyval)(void *, void *, int *, void *), (*win_free_keyval)(int *);
    int (*comm_test_inter)(void *, int *), (*comm_size)(void *, int *),
        (*comm_remote_size)(void *, int *);
    int (*topo_test)(void *, int *), (*cartdim_get)(void *, int *), (*comm_rank)(void *, int *);
    int (*graph_neighbors_count)(void *, int, int *);
    int (*dist_graph_neighbors_count)(void *, int *, int *, int *);
    int (*grequest_start)(void *, void *, void *, void *, void **);
    int (*register_datarep)(const char *, void *, void *, void *, void *),
        (*register_datarep_c)(const char *, void *, void *, void *, void *);
    /* [int, _c][alltoallw, neighbor][blocking, I, _init] */
    void *alltoallw[2][2][3];
} abi_locus_t;
extern abi_locus_t abi_locus;

/* Generated (abi_mpich_gen.c). */
extern const char *const abi_fn_names[];
extern void *abi_fn[];
extern const abi_pair_t abi_predef[], abi_classes[];
extern const int abi_npredef, abi_nclasses;

#define ABI_STACK_MAX 16

/* Arrays converted for one call: a stack buffer, or allocated beyond it. */
void *abi_temp(void *stack, size_t size, int n);
void abi_temp_free(void *p, void *stack);
int abi_no_mem(const char *fn);

/* Predefined handles: 1 and the other side's value when h is one. */
int abi_predef_in(intptr_t legacy, int kind, int *locus);
int abi_predef_out(int locus, intptr_t *legacy);

/* Handles, both ways (the ABI's folder). */
void *abi_comm_in(MPI_Comm h);
MPI_Comm abi_comm_out(void *l);
void *abi_dtype_in(MPI_Datatype h);
MPI_Datatype abi_dtype_out(void *l);
void *abi_group_in(MPI_Group h);
MPI_Group abi_group_out(void *l);
void *abi_op_in(MPI_Op h);
MPI_Op abi_op_out(void *l);
void *abi_req_in(MPI_Request h);
MPI_Request abi_req_out(void *l);
void *abi_errh_in(MPI_Errhandler h);
MPI_Errhandler abi_errh_out(void *l);
void *abi_info_in(MPI_Info h);
MPI_Info abi_info_out(void *l);
void *abi_msg_in(MPI_Message h);
MPI_Message abi_msg_out(void *l);
void *abi_win_in(MPI_Win h);
MPI_Win abi_win_out(void *l);
void *abi_file_in(MPI_File h);
MPI_File abi_file_out(void *l);
void *abi_session_in(MPI_Session h);
MPI_Session abi_session_out(void *l);

/* The objects with error handlers, in abi_locus.create_errhandler's order. */
enum abi_errh_kind { ABI_ERRH_COMM, ABI_ERRH_WIN, ABI_ERRH_FILE, ABI_ERRH_SESSION };

/* Values. A map's pairs (generated: rank, tag, thread, compare, split,
 * topo, combiner, typeclass, keyval) convert either way; a value in no
 * pair is itself. */
const void *abi_buf_in(const void *buf);
/* The sum of n ints (spawn_multiple's process counts). */
int abi_sum(const int *v, int n);
/* A graph's weights: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY as Locus's. */
const int *abi_weights_in(const int *w);
int abi_map(const int (*pairs)[2], int n, int v, int to_locus);
/* A map of flags that combine: each pair's bit set in v maps on its own. */
int abi_bits(const int (*pairs)[2], int n, int v, int to_locus);
#define ABI_MAP(m) int abi_##m##_in(int v); int abi_##m##_out(int v);
ABI_MAP(rank) ABI_MAP(tag) ABI_MAP(thread) ABI_MAP(compare) ABI_MAP(split) ABI_MAP(topo)
ABI_MAP(combiner) ABI_MAP(typeclass) ABI_MAP(keyval) ABI_MAP(class) ABI_MAP(lock)
ABI_MAP(assert) ABI_MAP(amode) ABI_MAP(whence) ABI_MAP(order) ABI_MAP(distrib) ABI_MAP(darg)
ABI_MAP(flavor) ABI_MAP(model) ABI_MAP(tbind) ABI_MAP(tscope) ABI_MAP(tverb) ABI_MAP(tpclass)
ABI_MAP(tsorder) ABI_MAP(tcbsafe)
#undef ABI_MAP

/* An attribute's value read (MPI_Comm/Win_get_attr of Locus's keyval
 * lkey): a predefined one whose value is a constant (MPI_HOST, MPI_IO,
 * MPI_LASTUSEDCODE, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL) in the ABI's. */
void abi_attr_out(int lkey, void *attribute_val);

/* A status's fields in the ABI's values, whatever its layout (common). */
typedef struct {
    MPI_Count bytes;
    int cancelled, source, tag, error;
} abi_status_fields_t;
void abi_status_read(const abi_locus_status_t *l, abi_status_fields_t *f);
void abi_status_write(const abi_status_fields_t *f, abi_locus_status_t *l);

/* Statuses (the ABI's folder: its layout). */
int abi_status_ignored(const MPI_Status *s);
int abi_statuses_ignored(const MPI_Status *s);
/* MPI_ERROR is copied only when Locus wrote it (l->error no longer
 * ABI_STATUS_UNSET): most calls leave the field as the program set it, and
 * so must the layer, not put its scratch copy's value there. */
void abi_status_out(const abi_locus_status_t *l, MPI_Status *s);
void abi_status_in(const MPI_Status *s, abi_locus_status_t *l);

/* A Locus return code as MPICH's error class; 1 when it is
 * MPI_ERR_IN_STATUS (the statuses say more). */
int abi_err_out(int rc);
int abi_in_status(int rc);

#endif
