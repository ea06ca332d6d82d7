/*
 * abi_compat.h — what Open MPI 5's mpi.h has beyond the 4.1 one the layer
 * compiles against, in Open MPI 5's form: binaries built against Open MPI
 * 5 (PyPI's mpi4py wheel among them) keep the same soname and name these.
 * Sessions, the large-count callbacks, MPI_ERRORS_ABORT, error classes. gen_abi.py reads
 * this file beside the header, and defines each object marked "exported
 * object, N bytes" the way it defines Open MPI 4.1's own.
 */
#ifndef LOCUS_ABI_COMPAT_H
#define LOCUS_ABI_COMPAT_H

#ifndef MPI_SESSION_NULL
typedef struct ompi_instance_t *MPI_Session;
typedef void MPI_Session_errhandler_function(MPI_Session *, int *, ...);
typedef void MPI_User_function_c(void *, void *, MPI_Count *, MPI_Datatype *);
typedef int MPI_Datarep_conversion_function_c(void *, MPI_Datatype, MPI_Count, void *,
                                              MPI_Offset, void *);
extern struct ompi_predefined_instance_t ompi_mpi_instance_null; /* exported object, 512 bytes */
extern struct ompi_predefined_errhandler_t ompi_mpi_errors_abort; /* exported object, 1024 bytes */
#define MPI_SESSION_NULL ((MPI_Session)&ompi_mpi_instance_null)
#define MPI_ERRORS_ABORT ((MPI_Errhandler)&ompi_mpi_errors_abort)
/* The tool interface's events (MPI 4.0). */
typedef struct mca_base_raw_event_registration_s *MPI_T_event_registration;
typedef struct mca_base_event_instance_s *MPI_T_event_instance;
typedef enum { MPI_T_SOURCE_ORDERED, MPI_T_SOURCE_UNORDERED } MPI_T_source_order;
typedef enum {
    MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_T_CB_REQUIRE_THREAD_SAFE,
    MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE
} MPI_T_cb_safety;
#endif

/* Error classes and split types Open MPI 5 numbers beyond 4.1's. */
#ifndef MPI_ERR_SESSION
#define MPI_ERR_PROC_ABORTED 74
#define MPI_ERR_PROC_FAILED 75
#define MPI_ERR_PROC_FAILED_PENDING 76
#define MPI_ERR_REVOKED 77
#define MPI_ERR_SESSION 78
#define MPI_ERR_VALUE_TOO_LARGE 79
#define MPI_COMM_TYPE_HW_UNGUIDED 12
#define MPI_COMM_TYPE_HW_GUIDED 13
#endif

#endif
