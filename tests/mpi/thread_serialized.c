/*
 * MPI_THREAD_SERIALIZED: MPI_Init_thread(SERIALIZED) provides it (not
 * more: the library then takes no lock) and MPI_Query_thread agrees; MPI_Is_thread_main is true only in the thread
 * that called MPI_Init_thread. Four threads per rank then take turns (a
 * mutex) calling MPI: each exchanges ROUNDS messages with the same thread
 * of the next and previous ranks (nonblocking under the lock, tested until
 * done, the lock released in between so no thread blocks the others), and
 * creates and frees a communicator per round. Every payload is checked;
 * the job must neither hang nor lose a message.
 */
#include <pthread.h>
#include <sched.h>

#include "mtest.h"

#define NTHREADS 4
#define ROUNDS 200

static int rank, size;
static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static int thread_errs[NTHREADS];

static void wait_turns(MPI_Request *reqs, int n)
{
    for (int done = 0; !done;) {
        pthread_mutex_lock(&mpi_lock);
        MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        pthread_mutex_unlock(&mpi_lock);
        if (!done)
            sched_yield();
    }
}

static void *worker(void *arg)
{
    int t = (int)(long)arg, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    pthread_mutex_lock(&mpi_lock);
    int is_main = 1;
    MPI_Is_thread_main(&is_main);
    pthread_mutex_unlock(&mpi_lock);
    if (is_main)
        thread_errs[t]++;
    for (int i = 0; i < ROUNDS; i++) {
        int out[2] = {rank, t * ROUNDS + i}, in[2] = {-1, -1};
        MPI_Request reqs[2];
        MPI_Comm dup;
        pthread_mutex_lock(&mpi_lock);
        MPI_Irecv(in, 2, MPI_INT, prev, t, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(out, 2, MPI_INT, next, t, MPI_COMM_WORLD, &reqs[1]);
        MPI_Comm_dup(MPI_COMM_SELF, &dup);
        MPI_Comm_free(&dup);
        pthread_mutex_unlock(&mpi_lock);
        wait_turns(reqs, 2);
        if (in[0] != prev || in[1] != t * ROUNDS + i)
            thread_errs[t]++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, level = -1, flag = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Query_thread(&level);
    CHECK(provided == MPI_THREAD_SERIALIZED && level == provided, "provided %d, query %d",
          provided, level);
    MPI_Is_thread_main(&flag);
    CHECK(flag, "the initializing thread is not the main thread");

    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(thread_errs[t] == 0, "thread %d: %d wrong messages or main-thread answers", t,
              thread_errs[t]);
    }
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size, "allreduce after the threads: %d", sum);
    return mtest_finish();
}
