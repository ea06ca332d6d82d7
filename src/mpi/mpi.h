/*
 * mpi.h — the C interface of Locus's MPI library (liblocusmpi).
 *
 * Handles: MPI_Comm, MPI_Group and MPI_Request are pointers to library
 * objects (the predefined ones are addresses of extern objects, so they are
 * link-time constants); MPI_Datatype points to a datatype-engine object
 * (locus_dt_<name> for the predefined types); MPI_Op, MPI_Errhandler and
 * MPI_Info are small integers.
 *
 * Profiling interface: every MPI_X is also exported as PMPI_X; MPI_X is a
 * weak alias of PMPI_X, so a tool can define MPI_X and call PMPI_X.
 */
#ifndef LOCUS_MPI_H
#define LOCUS_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What liblocusmpi exports: the MPI interface, nothing of its layers. */
#if defined(__GNUC__)
#define LOCUS_MPI_API __attribute__((visibility("default")))
#else
#define LOCUS_MPI_API
#endif

#define MPI_VERSION    3
#define MPI_SUBVERSION 1
#define LOCUS_MPI 1

/* ---- handle types ---- */
typedef struct locus_comm *MPI_Comm;
typedef struct locus_group *MPI_Group;
typedef struct locus_req *MPI_Request;
typedef struct locus_dtype *MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int locus_cancelled;      /* internal: MPI_Test_cancelled */
    long long locus_count;    /* internal: bytes received */
} MPI_Status;

typedef void MPI_User_function(void *invec, void *inoutvec, int *len,
                               MPI_Datatype *datatype);

/* ---- predefined communicators and groups ---- */
extern LOCUS_MPI_API struct locus_comm locus_mpi_comm_world;
extern LOCUS_MPI_API struct locus_comm locus_mpi_comm_self;
extern LOCUS_MPI_API struct locus_group locus_mpi_group_empty;
#define MPI_COMM_WORLD (&locus_mpi_comm_world)
#define MPI_COMM_SELF  (&locus_mpi_comm_self)
#define MPI_COMM_NULL  ((MPI_Comm)0)
#define MPI_GROUP_EMPTY (&locus_mpi_group_empty)
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_INFO_NULL  0
#define MPI_ERRHANDLER_NULL   0
#define MPI_ERRORS_ARE_FATAL  1
#define MPI_ERRORS_RETURN     2

/* ---- predefined datatypes (objects defined by the datatype engine) ---- */
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define LOCUS_DT_(n) extern LOCUS_MPI_API struct locus_dtype locus_dt_##n;
LOCUS_DT_(byte) LOCUS_DT_(packed) LOCUS_DT_(char) LOCUS_DT_(signed_char)
LOCUS_DT_(unsigned_char) LOCUS_DT_(wchar) LOCUS_DT_(short) LOCUS_DT_(unsigned_short)
LOCUS_DT_(int) LOCUS_DT_(unsigned) LOCUS_DT_(long) LOCUS_DT_(unsigned_long)
LOCUS_DT_(long_long) LOCUS_DT_(unsigned_long_long) LOCUS_DT_(float) LOCUS_DT_(double)
LOCUS_DT_(long_double) LOCUS_DT_(int8_t) LOCUS_DT_(uint8_t) LOCUS_DT_(int16_t)
LOCUS_DT_(uint16_t) LOCUS_DT_(int32_t) LOCUS_DT_(uint32_t) LOCUS_DT_(int64_t)
LOCUS_DT_(uint64_t) LOCUS_DT_(c_bool) LOCUS_DT_(aint) LOCUS_DT_(offset) LOCUS_DT_(count)
LOCUS_DT_(float_int) LOCUS_DT_(double_int) LOCUS_DT_(long_int) LOCUS_DT_(2int)
LOCUS_DT_(short_int) LOCUS_DT_(long_double_int)
#undef LOCUS_DT_
#define MPI_BYTE               (&locus_dt_byte)
#define MPI_PACKED             (&locus_dt_packed)
#define MPI_CHAR               (&locus_dt_char)
#define MPI_SIGNED_CHAR        (&locus_dt_signed_char)
#define MPI_UNSIGNED_CHAR      (&locus_dt_unsigned_char)
#define MPI_WCHAR              (&locus_dt_wchar)
#define MPI_SHORT              (&locus_dt_short)
#define MPI_UNSIGNED_SHORT     (&locus_dt_unsigned_short)
#define MPI_INT                (&locus_dt_int)
#define MPI_UNSIGNED           (&locus_dt_unsigned)
#define MPI_LONG               (&locus_dt_long)
#define MPI_UNSIGNED_LONG      (&locus_dt_unsigned_long)
#define MPI_LONG_LONG_INT      (&locus_dt_long_long)
#define MPI_LONG_LONG          (&locus_dt_long_long)
#define MPI_UNSIGNED_LONG_LONG (&locus_dt_unsigned_long_long)
#define MPI_FLOAT              (&locus_dt_float)
#define MPI_DOUBLE             (&locus_dt_double)
#define MPI_LONG_DOUBLE        (&locus_dt_long_double)
#define MPI_INT8_T             (&locus_dt_int8_t)
#define MPI_UINT8_T            (&locus_dt_uint8_t)
#define MPI_INT16_T            (&locus_dt_int16_t)
#define MPI_UINT16_T           (&locus_dt_uint16_t)
#define MPI_INT32_T            (&locus_dt_int32_t)
#define MPI_UINT32_T           (&locus_dt_uint32_t)
#define MPI_INT64_T            (&locus_dt_int64_t)
#define MPI_UINT64_T           (&locus_dt_uint64_t)
#define MPI_C_BOOL             (&locus_dt_c_bool)
#define MPI_AINT               (&locus_dt_aint)
#define MPI_OFFSET             (&locus_dt_offset)
#define MPI_COUNT              (&locus_dt_count)
#define MPI_FLOAT_INT          (&locus_dt_float_int)
#define MPI_DOUBLE_INT         (&locus_dt_double_int)
#define MPI_LONG_INT           (&locus_dt_long_int)
#define MPI_2INT               (&locus_dt_2int)
#define MPI_SHORT_INT          (&locus_dt_short_int)
#define MPI_LONG_DOUBLE_INT    (&locus_dt_long_double_int)

/* ---- reduction operations ---- */
#define MPI_OP_NULL  0
#define MPI_MAX      1
#define MPI_MIN      2
#define MPI_SUM      3
#define MPI_PROD     4
#define MPI_LAND     5
#define MPI_BAND     6
#define MPI_LOR      7
#define MPI_BOR      8
#define MPI_LXOR     9
#define MPI_BXOR     10
#define MPI_MINLOC   11
#define MPI_MAXLOC   12
#define MPI_REPLACE  13
#define MPI_NO_OP    14

/* ---- special values ---- */
#define MPI_ANY_SOURCE   (-1)
#define MPI_ANY_TAG      (-1)
#define MPI_PROC_NULL    (-2)
#define MPI_ROOT         (-3)
#define MPI_UNDEFINED    (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_STATUS_IGNORE   ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_IN_PLACE     ((void *)1)  /* the MPI-5 ABI value */
#define MPI_BOTTOM       ((void *)0)
#define MPI_BSEND_OVERHEAD 64

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING   512
#define MPI_MAX_OBJECT_NAME    128
#define MPI_MAX_LIBRARY_VERSION_STRING 256

#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* MPI_Comm_compare results */
#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

/* MPI_Comm_split_type */
#define MPI_COMM_TYPE_SHARED 1

/* predefined attribute keys (MPI_Comm_get_attr) */
#define MPI_TAG_UB          1
#define MPI_HOST            2
#define MPI_IO              3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE   5
#define MPI_APPNUM          6

/* ---- error classes ---- */
#define MPI_SUCCESS         0
#define MPI_ERR_BUFFER      1
#define MPI_ERR_COUNT       2
#define MPI_ERR_TYPE        3
#define MPI_ERR_TAG         4
#define MPI_ERR_COMM        5
#define MPI_ERR_RANK        6
#define MPI_ERR_ROOT        7
#define MPI_ERR_GROUP       8
#define MPI_ERR_OP          9
#define MPI_ERR_TOPOLOGY    10
#define MPI_ERR_DIMS        11
#define MPI_ERR_ARG         12
#define MPI_ERR_UNKNOWN     13
#define MPI_ERR_TRUNCATE    14
#define MPI_ERR_OTHER       15
#define MPI_ERR_INTERN      16
#define MPI_ERR_IN_STATUS   17
#define MPI_ERR_PENDING     18
#define MPI_ERR_REQUEST     19
#define MPI_ERR_KEYVAL      20
#define MPI_ERR_NO_MEM      21
#define MPI_ERR_INFO        22
#define MPI_ERR_LASTCODE    22

/*
 * Prototypes. Each MPI_X has a PMPI_X twin with the same signature.
 * LOCUS_MPI_FN(ret, name, args) declares both.
 */
#define LOCUS_MPI_FN(ret, name, args) \
    LOCUS_MPI_API ret MPI_##name args; LOCUS_MPI_API ret PMPI_##name args;

/* environment */
LOCUS_MPI_FN(int, Init, (int *argc, char ***argv))
LOCUS_MPI_FN(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
LOCUS_MPI_FN(int, Initialized, (int *flag))
LOCUS_MPI_FN(int, Finalize, (void))
LOCUS_MPI_FN(int, Finalized, (int *flag))
LOCUS_MPI_FN(int, Query_thread, (int *provided))
LOCUS_MPI_FN(int, Is_thread_main, (int *flag))
LOCUS_MPI_FN(int, Abort, (MPI_Comm comm, int errorcode))
LOCUS_MPI_FN(int, Get_processor_name, (char *name, int *resultlen))
LOCUS_MPI_FN(int, Get_version, (int *version, int *subversion))
LOCUS_MPI_FN(int, Get_library_version, (char *version, int *resultlen))
LOCUS_MPI_FN(double, Wtime, (void))
LOCUS_MPI_FN(double, Wtick, (void))
LOCUS_MPI_FN(int, Error_string, (int errorcode, char *string, int *resultlen))
LOCUS_MPI_FN(int, Error_class, (int errorcode, int *errorclass))
LOCUS_MPI_FN(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
LOCUS_MPI_FN(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
LOCUS_MPI_FN(int, Errhandler_free, (MPI_Errhandler *errhandler))

/* point-to-point */
LOCUS_MPI_FN(int, Send, (const void *buf, int count, MPI_Datatype datatype, int dest,
                         int tag, MPI_Comm comm))
LOCUS_MPI_FN(int, Ssend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm))
LOCUS_MPI_FN(int, Rsend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm))
LOCUS_MPI_FN(int, Bsend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm))
LOCUS_MPI_FN(int, Buffer_attach, (void *buffer, int size))
LOCUS_MPI_FN(int, Buffer_detach, (void *buffer_addr, int *size))
LOCUS_MPI_FN(int, Recv, (void *buf, int count, MPI_Datatype datatype, int source,
                         int tag, MPI_Comm comm, MPI_Status *status))
LOCUS_MPI_FN(int, Isend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Issend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                           int tag, MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Irsend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                           int tag, MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                           int tag, MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Irecv, (void *buf, int count, MPI_Datatype datatype, int source,
                          int tag, MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Wait, (MPI_Request *request, MPI_Status *status))
LOCUS_MPI_FN(int, Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]))
LOCUS_MPI_FN(int, Waitany, (int count, MPI_Request requests[], int *index,
                            MPI_Status *status))
LOCUS_MPI_FN(int, Waitsome, (int incount, MPI_Request requests[], int *outcount,
                             int indices[], MPI_Status statuses[]))
LOCUS_MPI_FN(int, Test, (MPI_Request *request, int *flag, MPI_Status *status))
LOCUS_MPI_FN(int, Testall, (int count, MPI_Request requests[], int *flag,
                            MPI_Status statuses[]))
LOCUS_MPI_FN(int, Testany, (int count, MPI_Request requests[], int *index, int *flag,
                            MPI_Status *status))
LOCUS_MPI_FN(int, Testsome, (int incount, MPI_Request requests[], int *outcount,
                             int indices[], MPI_Status statuses[]))
LOCUS_MPI_FN(int, Request_free, (MPI_Request *request))
LOCUS_MPI_FN(int, Cancel, (MPI_Request *request))
LOCUS_MPI_FN(int, Test_cancelled, (const MPI_Status *status, int *flag))
LOCUS_MPI_FN(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             int dest, int sendtag, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int source, int recvtag,
                             MPI_Comm comm, MPI_Status *status))
LOCUS_MPI_FN(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype datatype,
                                     int dest, int sendtag, int source, int recvtag,
                                     MPI_Comm comm, MPI_Status *status))
LOCUS_MPI_FN(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
LOCUS_MPI_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag,
                           MPI_Status *status))
LOCUS_MPI_FN(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
LOCUS_MPI_FN(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype,
                                 int *count))

/* communicators and groups */
LOCUS_MPI_FN(int, Comm_rank, (MPI_Comm comm, int *rank))
LOCUS_MPI_FN(int, Comm_size, (MPI_Comm comm, int *size))
LOCUS_MPI_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
LOCUS_MPI_FN(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
LOCUS_MPI_FN(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info,
                                    MPI_Comm *newcomm))
LOCUS_MPI_FN(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
LOCUS_MPI_FN(int, Comm_free, (MPI_Comm *comm))
LOCUS_MPI_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
LOCUS_MPI_FN(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
LOCUS_MPI_FN(int, Comm_set_name, (MPI_Comm comm, const char *comm_name))
LOCUS_MPI_FN(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen))
LOCUS_MPI_FN(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val,
                                  int *flag))
LOCUS_MPI_FN(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
LOCUS_MPI_FN(int, Group_incl, (MPI_Group group, int n, const int ranks[],
                               MPI_Group *newgroup))
LOCUS_MPI_FN(int, Group_excl, (MPI_Group group, int n, const int ranks[],
                               MPI_Group *newgroup))
LOCUS_MPI_FN(int, Group_size, (MPI_Group group, int *size))
LOCUS_MPI_FN(int, Group_rank, (MPI_Group group, int *rank))
LOCUS_MPI_FN(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[],
                                          MPI_Group group2, int ranks2[]))
LOCUS_MPI_FN(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
LOCUS_MPI_FN(int, Group_free, (MPI_Group *group))

/* datatypes (implemented in src/mpi/type.c) */
LOCUS_MPI_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
LOCUS_MPI_FN(int, Type_vector, (int count, int blocklength, int stride,
                                MPI_Datatype oldtype, MPI_Datatype *newtype))
LOCUS_MPI_FN(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride,
                                        MPI_Datatype oldtype, MPI_Datatype *newtype))
LOCUS_MPI_FN(int, Type_indexed, (int count, const int array_of_blocklengths[],
                                 const int array_of_displacements[], MPI_Datatype oldtype,
                                 MPI_Datatype *newtype))
LOCUS_MPI_FN(int, Type_create_hindexed, (int count, const int array_of_blocklengths[],
                                         const MPI_Aint array_of_displacements[],
                                         MPI_Datatype oldtype, MPI_Datatype *newtype))
LOCUS_MPI_FN(int, Type_create_indexed_block, (int count, int blocklength,
                                              const int array_of_displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype *newtype))
LOCUS_MPI_FN(int, Type_create_struct, (int count, const int array_of_blocklengths[],
                                       const MPI_Aint array_of_displacements[],
                                       const MPI_Datatype array_of_types[],
                                       MPI_Datatype *newtype))
LOCUS_MPI_FN(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                        MPI_Datatype *newtype))
LOCUS_MPI_FN(int, Type_commit, (MPI_Datatype *datatype))
LOCUS_MPI_FN(int, Type_free, (MPI_Datatype *datatype))
LOCUS_MPI_FN(int, Type_size, (MPI_Datatype datatype, int *size))
LOCUS_MPI_FN(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
LOCUS_MPI_FN(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint *true_lb,
                                         MPI_Aint *true_extent))
LOCUS_MPI_FN(int, Pack, (const void *inbuf, int incount, MPI_Datatype datatype,
                         void *outbuf, int outsize, int *position, MPI_Comm comm))
LOCUS_MPI_FN(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf,
                           int outcount, MPI_Datatype datatype, MPI_Comm comm))
LOCUS_MPI_FN(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size))

/* reduction operations (implemented in src/mpi/op.c) */
LOCUS_MPI_FN(int, Op_create, (MPI_User_function *user_fn, int commute, MPI_Op *op))
LOCUS_MPI_FN(int, Op_free, (MPI_Op *op))

/* collectives (implemented in src/mpi/coll*.c) */
LOCUS_MPI_FN(int, Barrier, (MPI_Comm comm))
LOCUS_MPI_FN(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root,
                          MPI_Comm comm))
LOCUS_MPI_FN(int, Reduce, (const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
LOCUS_MPI_FN(int, Allreduce, (const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
LOCUS_MPI_FN(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm))
LOCUS_MPI_FN(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm))
LOCUS_MPI_FN(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm))
LOCUS_MPI_FN(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm))
LOCUS_MPI_FN(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm))
LOCUS_MPI_FN(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm))
LOCUS_MPI_FN(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm))
LOCUS_MPI_FN(int, Alltoallv, (const void *sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm))
LOCUS_MPI_FN(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
LOCUS_MPI_FN(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
LOCUS_MPI_FN(int, Scan, (const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
LOCUS_MPI_FN(int, Exscan, (const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
LOCUS_MPI_FN(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Ibcast, (void *buffer, int count, MPI_Datatype datatype, int root,
                           MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request))
LOCUS_MPI_FN(int, Ireduce, (const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                            MPI_Request *request))
LOCUS_MPI_FN(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request *request))
LOCUS_MPI_FN(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request *request))
LOCUS_MPI_FN(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Ialltoallv, (const void *sendbuf, const int sendcounts[],
                               const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Alltoallw, (const void *sendbuf, const int sendcounts[],
                              const int sdispls[], const MPI_Datatype sendtypes[],
                              void *recvbuf, const int recvcounts[], const int rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm))
LOCUS_MPI_FN(int, Ialltoallw, (const void *sendbuf, const int sendcounts[],
                               const int sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request *request))
LOCUS_MPI_FN(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf,
                                    const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                          MPI_Request *request))
LOCUS_MPI_FN(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Request *request))
LOCUS_MPI_FN(int, Iexscan, (const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                            MPI_Request *request))

#undef LOCUS_MPI_FN

#ifdef __cplusplus
}
#endif
#endif
