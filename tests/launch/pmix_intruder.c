/*
 * A PMIx client that is not a rank of the job but runs as its user, with a
 * rank's PMIx environment (the test copies it from /proc/PID/environ): it
 * connects to the node's PMIx server, starts a fence, and dies there
 * (SIGKILL), mid-session. The job must still end, on time and with every
 * rank's output.
 *   pmix_intruder         (environment: PMIX_NAMESPACE, PMIX_RANK, ...)
 */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void fence_done(pmix_status_t status, void *cbdata)
{
    (void)status, (void)cbdata;
}

int main(void)
{
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    printf("intruder: PMIx_Init: %s\n", PMIx_Error_string(rc));
    fflush(stdout);
    if (rc == PMIX_SUCCESS) {
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        rc = PMIx_Fence_nb(&all, 1, NULL, 0, fence_done, NULL);
        printf("intruder: PMIx_Fence_nb: %s\n", PMIx_Error_string(rc));
        fflush(stdout);
        usleep(200 * 1000);
    }
    kill(getpid(), SIGKILL);
    return 1;
}
