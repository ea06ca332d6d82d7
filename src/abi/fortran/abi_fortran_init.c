/*
 * abi_fortran_init.c — the hand-written entry points whose Fortran
 * arguments differ from C's: MPI_INIT (no argc/argv), MPI_PCONTROL (no
 * varargs), the functions (MPI_WTIME ...: no ierror), MPI_BUFFER_DETACH
 * (Fortran gets no address), MPI_INFO_GET(_STRING) (a value string of the
 * caller's length) and MPI_F_SYNC_REG.
 */
#include <stdlib.h>

#include "abi_fortran.h"

FORT_API void pmpi_init_(MPI_Fint *ierror)
{
    *ierror = MPI_Init(NULL, NULL);
}
FORT_ALIASES(init, INIT)

FORT_API void pmpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = MPI_Init_thread(NULL, NULL, *required, provided);
}
FORT_ALIASES(init_thread, INIT_THREAD)

FORT_API void pmpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierror)
{
    *ierror = MPI_Pcontrol(*level);
}
FORT_ALIASES(pcontrol, PCONTROL)

FORT_API double pmpi_wtime_(void)
{
    return MPI_Wtime();
}
FORT_ALIASES(wtime, WTIME)

FORT_API double pmpi_wtick_(void)
{
    return MPI_Wtick();
}
FORT_ALIASES(wtick, WTICK)

FORT_API MPI_Aint pmpi_aint_add_(const MPI_Aint *base, const MPI_Aint *disp)
{
    return MPI_Aint_add(*base, *disp);
}
FORT_ALIASES(aint_add, AINT_ADD)

FORT_API MPI_Aint pmpi_aint_diff_(const MPI_Aint *addr1, const MPI_Aint *addr2)
{
    return MPI_Aint_diff(*addr1, *addr2);
}
FORT_ALIASES(aint_diff, AINT_DIFF)

/* Fortran cannot use the address: it gets the size only. */
FORT_API void pmpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    void *addr = NULL;
    (void)buffer_addr;
    *ierror = MPI_Buffer_detach(&addr, size);
}
FORT_ALIASES(buffer_detach, BUFFER_DETACH)

/* The value comes back into the caller's string, up to valuelen. */
FORT_API void pmpi_info_get_(const MPI_Fint *info, const char *key, const MPI_Fint *valuelen,
                             char *value, MPI_Fint *flag, MPI_Fint *ierror, size_t key_len,
                             size_t value_len)
{
    int n = *valuelen < 0 ? 0 : *valuelen;
    char *k = fort_str_in(key, key_len, 1), *v = malloc((size_t)n + 1);
    if (!k || !v) {
        *ierror = fort_err(MPI_ERR_NO_MEM, "MPI_Info_get", "no memory for the key");
    } else {
        v[0] = '\0';
        *ierror = MPI_Info_get(MPI_Info_f2c(*info), k, n, v, flag);
        if (*ierror == MPI_SUCCESS) {
            *flag = *flag ? FORT_TRUE : FORT_FALSE;
            if (*flag)
                fort_str_out(value, value_len, v);
        }
    }
    free(k);
    free(v);
}
FORT_ALIASES(info_get, INFO_GET)

#ifndef OPEN_MPI /* MPI-4: Open MPI 4.1 has no MPI_Info_get_string */
/* buflen is in and out: the length the value needs comes back. */
FORT_API void pmpi_info_get_string_(const MPI_Fint *info, const char *key, MPI_Fint *buflen,
                                    char *value, MPI_Fint *flag, MPI_Fint *ierror,
                                    size_t key_len, size_t value_len)
{
    int n = (int)value_len + 1;
    char *k = fort_str_in(key, key_len, 1), *v = malloc((size_t)n);
    if (!k || !v) {
        *ierror = fort_err(MPI_ERR_NO_MEM, "MPI_Info_get_string", "no memory for the key");
    } else {
        v[0] = '\0';
        *ierror = MPI_Info_get_string(MPI_Info_f2c(*info), k, &n, v, flag);
        if (*ierror == MPI_SUCCESS) {
            *flag = *flag ? FORT_TRUE : FORT_FALSE;
            if (*flag)
                fort_str_out(value, value_len, v);
            /* Fortran's length has no terminator. */
            *buflen = n > 0 ? n - 1 : 0;
        }
    }
    free(k);
    free(v);
}
FORT_ALIASES(info_get_string, INFO_GET_STRING)
#endif

/* Its point is the call itself: the compiler must assume buf changed. */
FORT_API void pmpi_f_sync_reg_(void *buf)
{
    (void)buf;
}
FORT_ALIASES(f_sync_reg, F_SYNC_REG)
