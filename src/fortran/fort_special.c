/*
 * fort_special.c — Fortran entry points whose argument lists differ from
 * C's (MPI_Init without argc/argv, functions returning values, MPI_Pcontrol
 * without varargs, detach calls whose address Fortran cannot use) or whose
 * strings come with in/out lengths (MPI_Info_get, MPI_Info_get_string,
 * MPI_Session_get_nth_pset) or as arrays (MPI_Comm_spawn's argv,
 * MPI_Comm_spawn_multiple's commands and argvs).
 */
#include <stdlib.h>
#include <string.h>

#include "fort_impl.h"

FORT_API void pmpi_init_(MPI_Fint *ierror)
{
    *ierror = PMPI_Init(NULL, NULL);
}
FORT_WEAK(pmpi_init_, mpi_init_)

FORT_API void pmpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = PMPI_Init_thread(NULL, NULL, *required, provided);
}
FORT_WEAK(pmpi_init_thread_, mpi_init_thread_)

FORT_API void pmpi_finalize_(MPI_Fint *ierror)
{
    int rc = PMPI_Finalize();
    /* The attribute callbacks of MPI_COMM_SELF ran inside MPI_Finalize. */
    if (rc == MPI_SUCCESS)
        fort_callbacks_release();
    *ierror = rc;
}
FORT_WEAK(pmpi_finalize_, mpi_finalize_)

FORT_API void pmpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info c = MPI_INFO_NULL;
    int rc = PMPI_Info_create_env(0, NULL, &c);
    if (rc == MPI_SUCCESS)
        *info = PMPI_Info_toint(c);
    *ierror = rc;
}
FORT_WEAK(pmpi_info_create_env_, mpi_info_create_env_)

FORT_API double pmpi_wtime_(void)
{
    return PMPI_Wtime();
}
FORT_WEAK(pmpi_wtime_, mpi_wtime_)

FORT_API double pmpi_wtick_(void)
{
    return PMPI_Wtick();
}
FORT_WEAK(pmpi_wtick_, mpi_wtick_)

FORT_API MPI_Aint pmpi_aint_add_(const MPI_Aint *base, const MPI_Aint *disp)
{
    return PMPI_Aint_add(*base, *disp);
}
FORT_WEAK(pmpi_aint_add_, mpi_aint_add_)

FORT_API MPI_Aint pmpi_aint_diff_(const MPI_Aint *addr1, const MPI_Aint *addr2)
{
    return PMPI_Aint_diff(*addr1, *addr2);
}
FORT_WEAK(pmpi_aint_diff_, mpi_aint_diff_)

FORT_API void pmpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierror)
{
    *ierror = PMPI_Pcontrol(*level);
}
FORT_WEAK(pmpi_pcontrol_, mpi_pcontrol_)

/* MPI_F_SYNC_REG(buf): being an external call that may read and write buf
 * is all it has to do (the compiler must reload buf from memory). */
FORT_API void pmpi_f_sync_reg_(void *buf)
{
    (void)buf;
}
FORT_WEAK(pmpi_f_sync_reg_, mpi_f_sync_reg_)

/* ---- detaching a buffer: Fortran has no use for its address ---- */

FORT_API void pmpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    void *addr = NULL;
    (void)buffer_addr;
    *ierror = PMPI_Buffer_detach(&addr, size);
}
FORT_WEAK(pmpi_buffer_detach_, mpi_buffer_detach_)

FORT_API void pmpi_comm_detach_buffer_(const MPI_Fint *comm, void *buffer_addr, MPI_Fint *size,
                                       MPI_Fint *ierror)
{
    void *addr = NULL;
    (void)buffer_addr;
    *ierror = PMPI_Comm_detach_buffer(PMPI_Comm_fromint(*comm), &addr, size);
}
FORT_WEAK(pmpi_comm_detach_buffer_, mpi_comm_detach_buffer_)

/* Newer than the rest (MPI-4.1): referred to weakly, like the generated
 * bindings' calls. */
#pragma weak PMPI_Session_detach_buffer
FORT_API void pmpi_session_detach_buffer_(const MPI_Fint *session, void *buffer_addr,
                                          MPI_Fint *size, MPI_Fint *ierror)
{
    void *addr = NULL;
    (void)buffer_addr;
    if (!PMPI_Session_detach_buffer) {
        *ierror = fort_missing("MPI_Session_detach_buffer");
        return;
    }
    *ierror = PMPI_Session_detach_buffer(PMPI_Session_fromint(*session), &addr, size);
}
FORT_WEAK(pmpi_session_detach_buffer_, mpi_session_detach_buffer_)

/* ---- strings with in/out lengths ---- */

/* MPI_INFO_GET(INFO, KEY, VALUELEN, VALUE, FLAG, IERROR): at most VALUELEN
 * characters of the value. */
FORT_API void pmpi_info_get_(const MPI_Fint *info, const char *key, const MPI_Fint *valuelen,
                             char *value, MPI_Fint *flag, MPI_Fint *ierror, size_t key_len,
                             size_t value_len)
{
    static const char fn[] = "MPI_Info_get";
    int rc;
    char *k = fort_str_in(key, key_len, 1);
    char *v = malloc(*valuelen > 0 ? (size_t)*valuelen + 1 : 1);
    if (!k || !v) {
        rc = fort_err(MPI_ERR_NO_MEM, fn, "no memory for the key or the value");
    } else {
        rc = PMPI_Info_get(PMPI_Info_fromint(*info), k, *valuelen, v, flag);
        if (rc == MPI_SUCCESS) {
            fort_logical_out(flag, 1);
            if (*flag)
                fort_str_out(value, value_len, v);
        }
    }
    free(k);
    free(v);
    *ierror = rc;
}
FORT_WEAK(pmpi_info_get_, mpi_info_get_)

/* MPI_INFO_GET_STRING(INFO, KEY, BUFLEN, VALUE, FLAG, IERROR): BUFLEN in is
 * how many characters to copy (0: none), out the value's length. Fortran
 * strings have no terminator, so both are one less than C's. */
FORT_API void pmpi_info_get_string_(const MPI_Fint *info, const char *key, MPI_Fint *buflen,
                                    char *value, MPI_Fint *flag, MPI_Fint *ierror,
                                    size_t key_len, size_t value_len)
{
    static const char fn[] = "MPI_Info_get_string";
    int rc, want = *buflen;
    int cbuf = want > 0 ? want + 1 : want;
    char *k = fort_str_in(key, key_len, 1);
    char *v = malloc(cbuf > 0 ? (size_t)cbuf : 1);
    if (!k || !v) {
        rc = fort_err(MPI_ERR_NO_MEM, fn, "no memory for the key or the value");
    } else {
        rc = PMPI_Info_get_string(PMPI_Info_fromint(*info), k, &cbuf, v, flag);
        if (rc == MPI_SUCCESS) {
            fort_logical_out(flag, 1);
            if (*flag) {
                if (want > 0)
                    fort_str_out(value, value_len, v);
                *buflen = cbuf - 1;
            }
        }
    }
    free(k);
    free(v);
    *ierror = rc;
}
FORT_WEAK(pmpi_info_get_string_, mpi_info_get_string_)

/* MPI_SESSION_GET_NTH_PSET(SESSION, INFO, N, PSET_LEN, PSET_NAME, IERROR):
 * PSET_LEN 0 asks for the name's length; otherwise at most PSET_LEN
 * characters are copied. */
FORT_API void pmpi_session_get_nth_pset_(const MPI_Fint *session, const MPI_Fint *info,
                                         const MPI_Fint *n, MPI_Fint *pset_len, char *pset_name,
                                         MPI_Fint *ierror, size_t pset_name_len)
{
    static const char fn[] = "MPI_Session_get_nth_pset";
    int rc, want = *pset_len;
    int clen = want > 0 ? want + 1 : want;
    char *name = malloc(clen > 0 ? (size_t)clen : 1);
    if (!name) {
        rc = fort_err(MPI_ERR_NO_MEM, fn, "no memory for the name");
    } else {
        rc = PMPI_Session_get_nth_pset(PMPI_Session_fromint(*session), PMPI_Info_fromint(*info),
                                       *n, &clen, name);
        if (rc == MPI_SUCCESS) {
            if (want == 0)
                *pset_len = clen - 1;
            else
                fort_str_out(pset_name, pset_name_len, name);
        }
    }
    free(name);
    *ierror = rc;
}
FORT_WEAK(pmpi_session_get_nth_pset_, mpi_session_get_nth_pset_)

/* ---- MPI_Comm_spawn: argv is an array of blank-padded strings ending with
 * a blank one, or MPI_ARGV_NULL ---- */

static void argv_free(char **argv)
{
    for (char **a = argv; a && *a; a++)
        free(*a);
    free(argv);
}

/* The C argv of a Fortran one whose strings lie stride strings apart (1,
 * or one row of MPI_Comm_spawn_multiple's ARRAY_OF_ARGV(COUNT, *)); *ok is
 * 0 when memory ran out. */
static char **argv_in(const char *f, size_t len, size_t stride, int *ok)
{
    *ok = 1;
    if (f == locus_mpif_char_sentinels_.argv_null)
        return MPI_ARGV_NULL;
    int n = 0;
    for (;; n++) {
        size_t i = 0;
        const char *s = f + (size_t)n * stride * len;
        while (i < len && s[i] == ' ')
            i++;
        if (i == len)
            break;
    }
    char **argv = calloc((size_t)n + 1, sizeof *argv);
    for (int i = 0; argv && i < n; i++)
        if (!(argv[i] = fort_str_in(f + (size_t)i * stride * len, len, 0))) {
            argv_free(argv);
            argv = NULL;
        }
    *ok = argv != NULL;
    return argv;
}

FORT_API void pmpi_comm_spawn_(const char *command, const char *argv, const MPI_Fint *maxprocs,
                               const MPI_Fint *info, const MPI_Fint *root, const MPI_Fint *comm,
                               MPI_Fint *intercomm, MPI_Fint *array_of_errcodes,
                               MPI_Fint *ierror, size_t command_len, size_t argv_len)
{
    static const char fn[] = "MPI_Comm_spawn";
    MPI_Comm c = PMPI_Comm_fromint(*comm), inter = MPI_COMM_NULL;
    /* command and argv mean something at the root only. */
    int me = -1, ok = 1, rc;
    if (c != MPI_COMM_NULL)
        PMPI_Comm_rank(c, &me);
    char *cmd = NULL, **args = NULL;
    if (me == *root) {
        cmd = fort_str_in(command, command_len, 0);
        args = argv_in(argv, argv_len, 1, &ok);
    }
    if ((me == *root && !cmd) || !ok) {
        rc = fort_err(MPI_ERR_NO_MEM, fn, "no memory for the command line");
    } else {
        rc = PMPI_Comm_spawn(cmd, args, *maxprocs, PMPI_Info_fromint(*info), *root, c, &inter,
                             fort_errcodes(array_of_errcodes));
        *intercomm = PMPI_Comm_toint(inter);
    }
    free(cmd);
    argv_free(args);
    *ierror = rc;
}
FORT_WEAK(pmpi_comm_spawn_, mpi_comm_spawn_)

/* ---- MPI_Comm_spawn_multiple: count commands, and ARRAY_OF_ARGV(COUNT, *)
 * whose row i is command i's argv (or MPI_ARGVS_NULL) ---- */

/* The C arrays of count commands and their argvs; 0 when memory ran out. */
static int spawn_lines_in(int count, const char *commands, size_t commands_len,
                          const char *argvs, size_t argv_len, char ***cmds, char ****argv)
{
    *cmds = calloc((size_t)count + 1, sizeof **cmds);
    *argv = argvs == locus_mpif_char_sentinels_.argvs_null
                ? MPI_ARGVS_NULL : calloc((size_t)count + 1, sizeof **argv);
    int ok = *cmds && (*argv || argvs == locus_mpif_char_sentinels_.argvs_null);
    for (int i = 0; ok && i < count; i++) {
        ok = ((*cmds)[i] = fort_str_in(commands + (size_t)i * commands_len, commands_len, 0))
             != NULL;
        if (ok && *argv)
            (*argv)[i] = argv_in(argvs + (size_t)i * argv_len, argv_len, (size_t)count, &ok);
    }
    return ok;
}

static void spawn_lines_free(int count, char **cmds, char ***argv)
{
    for (int i = 0; i < count; i++) {
        free(cmds ? cmds[i] : NULL);
        argv_free(argv ? argv[i] : NULL);
    }
    free(cmds);
    free(argv);
}

FORT_API void pmpi_comm_spawn_multiple_(const MPI_Fint *count, const char *array_of_commands,
                                        const char *array_of_argv,
                                        const MPI_Fint *array_of_maxprocs,
                                        const MPI_Fint *array_of_info, const MPI_Fint *root,
                                        const MPI_Fint *comm, MPI_Fint *intercomm,
                                        MPI_Fint *array_of_errcodes, MPI_Fint *ierror,
                                        size_t commands_len, size_t argv_len)
{
    static const char fn[] = "MPI_Comm_spawn_multiple";
    MPI_Comm c = PMPI_Comm_fromint(*comm), inter = MPI_COMM_NULL;
    /* The commands, argvs, process counts and infos mean something at the
     * root only. */
    int me = -1, n = *count > 0 ? *count : 0, rc;
    if (c != MPI_COMM_NULL)
        PMPI_Comm_rank(c, &me);
    char **cmds = NULL, ***argv = NULL;
    MPI_Info *info = NULL;
    int ok = me != *root || ((info = calloc((size_t)n + 1, sizeof *info)) &&
                             spawn_lines_in(n, array_of_commands, commands_len, array_of_argv,
                                            argv_len, &cmds, &argv));
    for (int i = 0; ok && info && i < n; i++)
        info[i] = PMPI_Info_fromint(array_of_info[i]);
    if (!ok) {
        rc = fort_err(MPI_ERR_NO_MEM, fn, "no memory for the command lines");
    } else {
        rc = PMPI_Comm_spawn_multiple(*count, cmds, argv, array_of_maxprocs, info, *root, c,
                                      &inter, fort_errcodes(array_of_errcodes));
        *intercomm = PMPI_Comm_toint(inter);
    }
    spawn_lines_free(n, cmds, argv);
    free(info);
    *ierror = rc;
}
FORT_WEAK(pmpi_comm_spawn_multiple_, mpi_comm_spawn_multiple_)
