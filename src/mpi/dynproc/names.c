/*
 * names.c — MPI_Publish_name, MPI_Lookup_name and MPI_Unpublish_name over
 * the name service of the launch (locus_boot_name_*: locusrun's front end
 * keeps the table; every job one launch spawns shares it). Names are
 * global to the launch, not scoped by job or info (MPI leaves the scope to
 * the implementation); a name is published once until unpublished,
 * whoever publishes it.
 *
 * Error classes as MPICH gives them: a lookup that finds nothing is
 * MPI_ERR_NAME, an unpublish of a name not published and a publish that
 * cannot be made (the name taken, no name service) MPI_ERR_SERVICE.
 */
#include <stdio.h>
#include <string.h>

#include "dynproc.h"

enum { NAME_PUBLISH, NAME_LOOKUP, NAME_UNPUBLISH }; /* `which`, as the bindings pass it */

/* which: NAME_*. For a lookup port_name is the output, MPI_MAX_PORT_NAME
 * bytes (the bindings share one signature among the three). */
int locus_publish_name_impl(int which, const char *service_name, MPI_Info info,
                            const char *port_name)
{
    (void)info; /* no info key changes where a name is kept */
    if (!service_name || !*service_name) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "empty service name");
        return MPI_ERR_ARG;
    }
    if (!port_name || (which == NAME_PUBLISH && !*port_name)) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "no port name");
        return MPI_ERR_ARG;
    }
    char *why = locus_mpi.detail;
    size_t whylen = sizeof locus_mpi.detail;
    switch (which) {
    case NAME_PUBLISH:
        if (strlen(port_name) >= MPI_MAX_PORT_NAME) {
            snprintf(why, whylen, "port name longer than MPI_MAX_PORT_NAME - 1 (%d)",
                     MPI_MAX_PORT_NAME - 1);
            return MPI_ERR_ARG;
        }
        return locus_boot_name_publish(service_name, port_name, why, whylen) == 0
                   ? MPI_SUCCESS : MPI_ERR_SERVICE;
    case NAME_LOOKUP: {
        char *out = (char *)port_name;
        if (locus_boot_name_lookup(service_name, out, MPI_MAX_PORT_NAME, why, whylen) == 0)
            return MPI_SUCCESS;
        out[0] = '\0';
        return MPI_ERR_NAME;
    }
    case NAME_UNPUBLISH:
        return locus_boot_name_unpublish(service_name, why, whylen) == 0 ? MPI_SUCCESS
                                                                          : MPI_ERR_SERVICE;
    default:
        return MPI_ERR_INTERN;
    }
}
