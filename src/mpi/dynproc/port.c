/*
 * port.c — ports: MPI_Open_port/Close_port, MPI_Comm_accept and
 * MPI_Comm_connect, which the spawn calls use too (the parents accept on a
 * port their children connect to in MPI_Init).
 *
 * A port name is "locus-port:<job>:<rank>:<tag>:<card>": the process that
 * opened it (its job's name and world rank), a tag that tells its ports
 * apart, and its dyn card (where it listens, with the cookie that lets a
 * dialer in: knowing a port name is what allows a connection).
 *
 * The two roots meet on the reserved context LOCUS_CTX_DYN: the connecting
 * root sends its group (every member's name and card) with the port's tag,
 * the accepting root answers with its own; each root tells its group, every
 * member turns the other group's names into peer ids (processes of its own
 * job keep their world rank; others get dyn peers) and the context ids are
 * agreed as MPI_Intercomm_create does, the two roots trading over a
 * two-member "bridge" communicator on that context.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynproc.h"
#include "locus_dyn.h"

#define PORT_PREFIX "locus-port:"
#define REC_MAX (LOCUS_DYN_CARD_MAX + 48) /* "<job>.<rank>.<card>" */
#define MAX_OPEN_PORTS 64

static char *open_ports[MAX_OPEN_PORTS];
static uint32_t port_seq;

static locus_dtype_t *bytes_type(void)
{
    return locus_dtype_basic(LOCUS_EL_BYTE);
}

/* This process's card, the dyn transport's (its listener opens now). */
static int my_card(char *card, size_t len)
{
    if (!locus_mpi.dyn ||
        locus_dyn_card(locus_mpi.dyn, card, len, locus_mpi.detail, sizeof locus_mpi.detail))
        return MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

int locus_open_port_impl(MPI_Info info, char *port_name)
{
    (void)info;
    char card[LOCUS_DYN_CARD_MAX];
    int err = my_card(card, sizeof card);
    if (err)
        return err;
    int slot = 0;
    while (slot < MAX_OPEN_PORTS && open_ports[slot])
        slot++;
    if (slot == MAX_OPEN_PORTS) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%d ports are open already",
                 MAX_OPEN_PORTS);
        return MPI_ERR_PORT;
    }
    /* A meeting's messages are told apart by the port's tag alone (the
     * bridge's ranks are 0 and 1 in every meeting), so no two ports of a
     * process share one, and tags start from a per-process point (the
     * job's hash mixed with the rank) no two processes share often: a
     * process meeting two others at once, or a stale connect to a closed
     * port of a process that reused its pid, does not take another
     * meeting's messages. */
    if (port_seq == 0)
        port_seq = ((uint32_t)locus_mpi.job ^ (uint32_t)(locus_mpi.job >> 32) ^
                    (uint32_t)locus_mpi.boot.rank * 0x9e3779b1u) & 0x3fffffff;
    port_seq = port_seq % 0x3fffffffu + 1; /* 1 .. 2^30 - 1 */
    uint32_t tag = port_seq;
    int n = snprintf(port_name, MPI_MAX_PORT_NAME, PORT_PREFIX "%016" PRIx64 ":%d:%" PRIu32 ":%s",
                     locus_mpi.job, locus_mpi.boot.rank, tag, card);
    if (n < 0 || n >= MPI_MAX_PORT_NAME || !(open_ports[slot] = strdup(port_name)))
        return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

static int port_slot(const char *port_name)
{
    for (int i = 0; i < MAX_OPEN_PORTS; i++)
        if (open_ports[i] && strcmp(open_ports[i], port_name) == 0)
            return i;
    return -1;
}

int locus_close_port_impl(const char *port_name)
{
    int slot = port_slot(port_name);
    if (slot < 0) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "not a port this process opened");
        return MPI_ERR_PORT;
    }
    free(open_ports[slot]);
    open_ports[slot] = NULL;
    return MPI_SUCCESS;
}

void locus_ports_close_all(void)
{
    for (int i = 0; i < MAX_OPEN_PORTS; i++) {
        free(open_ports[i]);
        open_ports[i] = NULL;
    }
}

/* The opener's name, tag and card of a port name: 0, or -1 when it is
 * not one. */
static int port_parse(const char *port, locus_dyn_name_t *who, uint32_t *tag, char *card,
                      size_t len)
{
    if (strncmp(port, PORT_PREFIX, strlen(PORT_PREFIX)) != 0)
        return -1;
    char c[LOCUS_DYN_CARD_MAX + 1];
    int rank, used = 0;
    uint64_t job;
    if (sscanf(port + strlen(PORT_PREFIX), "%16" SCNx64 ":%d:%" SCNu32 ":%256[^:]%n", &job, &rank,
               tag, c, &used) != 4 || port[strlen(PORT_PREFIX) + (size_t)used] != '\0' || rank < 0 ||
        strlen(c) >= len)
        return -1;
    who->job = job;
    who->rank = rank;
    strcpy(card, c);
    return 0;
}

/* The peer id of a process named in a record or a port: its world rank in
 * this job, else a dyn peer (-1: MPI_ERR_PORT's detail says why). */
static int peer_of(locus_dyn_name_t who, const char *card)
{
    if (who.job == locus_mpi.job) {
        if (who.rank >= locus_mpi.boot.size) {
            snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "rank %d is not in this job",
                     (int)who.rank);
            return -1;
        }
        return who.rank;
    }
    return locus_dyn_peer(locus_mpi.dyn, who, card, locus_mpi.detail, sizeof locus_mpi.detail);
}

/* ---- a group as records ---- */

/* What a root learns of the other group and tells its own. */
typedef struct {
    int32_t err;       /* an MPI error class the whole group returns */
    int32_t n;         /* members of the other group */
    int32_t leader;    /* the other root's rank in its group */
} meet_news_t;

/* Gathers every member's record ("<job>.<rank>.<card>") at root, after a
 * message head of meet_news_t (n: this group's size, leader: root): the
 * buffer the root sends, *msg (malloc'ed, root only), *msglen bytes. */
static int group_message(locus_comm_t *comm, int root, char **msg, size_t *msglen)
{
    char rec[REC_MAX] = "", card[LOCUS_DYN_CARD_MAX];
    int err = my_card(card, sizeof card);
    if (!err)
        snprintf(rec, sizeof rec, "%016" PRIx64 ".%d.%s", locus_mpi.job, locus_mpi.boot.rank,
                 card);
    int size = comm->coll.size, isroot = comm->coll.rank == root;
    *msglen = sizeof(meet_news_t) + (size_t)size * REC_MAX;
    *msg = isroot ? malloc(*msglen) : NULL;
    int e2 = locus_coll_gather(rec, REC_MAX, bytes_type(), *msg ? *msg + sizeof(meet_news_t) : NULL,
                               REC_MAX, bytes_type(), root, &comm->coll);
    if (isroot && !*msg)
        return MPI_ERR_NO_MEM;
    if (isroot) {
        /* A member without a card (its listener would not open) cannot
         * be reached: the whole meeting fails, on both sides. */
        for (int r = 0; !err && !e2 && r < size; r++)
            if ((*msg)[sizeof(meet_news_t) + (size_t)r * REC_MAX] == '\0') {
                snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                         "rank %d of the group has no address other jobs can reach", r);
                err = MPI_ERR_INTERN;
            }
        meet_news_t head = { err, size, root };
        memcpy(*msg, &head, sizeof head);
    }
    return err ? err : e2;
}

/* Peer ids of n records. */
static int records_ids(const char *recs, int n, int *ids)
{
    for (int i = 0; i < n; i++) {
        const char *r = recs + (size_t)i * REC_MAX;
        locus_dyn_name_t who;
        uint64_t job;
        int rank, used = 0;
        if (memchr(r, '\0', REC_MAX) == NULL ||
            sscanf(r, "%16" SCNx64 ".%d.%n", &job, &rank, &used) != 2 || used == 0) {
            snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "malformed member record");
            return MPI_ERR_INTERN;
        }
        who.job = job;
        who.rank = rank;
        if ((ids[i] = peer_of(who, r + used)) < 0)
            return MPI_ERR_PORT;
    }
    return MPI_SUCCESS;
}

/* Blocks until a message on the dyn context from bridge rank src (or any)
 * with tag arrives, and receives it whole into *buf (malloc'ed). give_up,
 * when not NULL, is asked between rounds: non-zero ends the wait with it
 * as the error (spawned children that never came). */
static int dyn_recv(int src, uint32_t tag, char **buf, size_t *len, int (*give_up)(void *),
                    void *arg)
{
    locus_core_t *c = locus_core();
    locus_umsg_t *u = NULL;
    int s, t;
    int err = MPI_SUCCESS;
    for (long round = 0; !u && !err; round++) {
        u = locus_core_improbe(c, LOCUS_CTX_DYN, src, (int)tag, &s, &t, len);
        if (u)
            break;
        int n = locus_core_progress(c);
        if (n < 0)
            return MPI_ERR_OTHER;
        if (give_up && (round & 255) == 0)
            err = give_up(arg);
        if (n == 0 && !err)
            locus_core_idle(c);
    }
    if (err)
        return err;
    *buf = malloc(*len ? *len : 1);
    locus_req_t *r = locus_core_req_get(c);
    if (!*buf || !r) {
        free(*buf);
        *buf = NULL;
        if (r)
            locus_core_req_put(c, r);
        return MPI_ERR_NO_MEM; /* the message is lost: the connect fails */
    }
    locus_p2p_recv_prep(*buf, *len, bytes_type(), LOCUS_ANY, LOCUS_ANY, LOCUS_CTX_DYN, r);
    locus_core_imrecv(c, r, u);
    return locus_p2p_finish(r, NULL);
}

static int dyn_send(locus_comm_t *bridge, int dest, uint32_t tag, const void *buf, size_t len)
{
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    int err = locus_p2p_isend(buf, len, bytes_type(), dest, (int)tag, bridge, LOCUS_CTX_DYN, 0, r);
    if (err) {
        locus_core_req_put(locus_core(), r);
        return err;
    }
    return locus_p2p_finish(r, NULL);
}

/* The bridge of the two roots: accepting root first. */
static int bridge_new(int accepting, int other, locus_comm_t **out)
{
    int me = locus_mpi.boot.rank;
    int world[2] = { accepting ? me : other, accepting ? other : me };
    int err = locus_comm_new(2, accepting ? 0 : 1, world, LOCUS_CTX_DYN, NULL, out);
    if (!err)
        (*out)->coll.no_shm = 1;
    return err;
}

/* A group's message (from group_message) checked: its head in *news. */
static int message_check(const char *msg, size_t len, meet_news_t *news)
{
    if (len < sizeof *news)
        return MPI_ERR_INTERN;
    memcpy(news, msg, sizeof *news);
    if (news->n < 1 || len != sizeof *news + (size_t)news->n * REC_MAX || news->leader < 0 ||
        news->leader >= news->n) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "malformed group message");
        return MPI_ERR_INTERN;
    }
    return news->err;
}

/* The root's side: the accepting root waits for the other group's message
 * and answers with its own (mine); the connecting root dials the port's
 * process, sends first and waits for the answer. *other (malloc'ed): the
 * other group's message; *bridge: the roots' bridge. */
static int root_meet(int accepting, const char *port, const char *mine, size_t mlen,
                     int (*give_up)(void *), void *arg, char **other, size_t *olen,
                     meet_news_t *news, locus_comm_t **bridge, uint32_t *tag)
{
    locus_dyn_name_t who;
    char card[LOCUS_DYN_CARD_MAX];
    if (port_parse(port, &who, tag, card, sizeof card) < 0 ||
        (accepting && port_slot(port) < 0)) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%s",
                 accepting ? "not a port this process opened" : "not a Locus port name");
        return MPI_ERR_PORT;
    }
    int err;
    if (accepting) {
        /* The connecting root is the bridge's rank 1 (bridge_new). */
        err = dyn_recv(1, *tag, other, olen, give_up, arg);
        if (!err)
            err = message_check(*other, *olen, news);
        /* The other root's id, to answer it. */
        int *ids = err ? NULL : malloc(sizeof *ids * (size_t)news->n);
        if (!err && !ids)
            err = MPI_ERR_NO_MEM;
        if (!err)
            err = records_ids(*other + sizeof *news, news->n, ids);
        if (!err)
            err = bridge_new(1, ids[news->leader], bridge);
        free(ids);
        if (!err)
            err = dyn_send(*bridge, 1, *tag, mine, mlen);
        return err;
    }
    int id = peer_of(who, card);
    if (id < 0)
        return MPI_ERR_PORT;
    if (who.job != locus_mpi.job &&
        locus_dyn_connect(locus_mpi.dyn, id, locus_mpi.detail, sizeof locus_mpi.detail) < 0)
        return MPI_ERR_PORT;
    err = bridge_new(0, id, bridge);
    if (!err)
        err = dyn_send(*bridge, 0, *tag, mine, mlen);
    if (!err)
        err = dyn_recv(0, *tag, other, olen, NULL, NULL);
    if (!err)
        err = message_check(*other, *olen, news);
    return err;
}

int locus_dyn_meet(int accepting, const char *port, int root, locus_comm_t *comm,
                   int (*give_up)(void *), void *arg, locus_comm_t **out)
{
    int isroot = comm->coll.rank == root;
    char *mine = NULL, *other = NULL;
    size_t mlen = 0, olen = 0;
    locus_comm_t *bridge = NULL;
    uint32_t tag = 0;
    meet_news_t news = { MPI_SUCCESS, 0, 0 };
    *out = NULL;
    int err = group_message(comm, root, &mine, &mlen);
    if (isroot) {
        if (!err)
            err = root_meet(accepting, port, mine, mlen, give_up, arg, &other, &olen, &news,
                            &bridge, &tag);
        news.err = err;
    }
    /* The root's news, then the other group's records, to every member. */
    int32_t head[4] = { news.err, news.n, news.leader, (int32_t)tag };
    err = locus_coll_bcast(head, 4, locus_dtype_basic(LOCUS_EL_INT32), root, &comm->coll);
    if (!err)
        err = head[0];
    int n = head[1];
    char *recs = err ? NULL : isroot ? other + sizeof news : malloc((size_t)n * REC_MAX);
    int *ids = err ? NULL : malloc(sizeof *ids * (size_t)n);
    if (!err && (!recs || !ids))
        err = MPI_ERR_NO_MEM; /* the job cannot go on: the other group waits */
    if (!err)
        err = locus_coll_bcast(recs, (size_t)n * REC_MAX, bytes_type(), root, &comm->coll);
    if (!err)
        err = records_ids(recs, n, ids);
    if (!err)
        err = locus_intercomm_finish(comm, root, bridge, accepting ? 1 : 0,
                                     locus_tag_reserved((int)head[3]), ids, n, out);
    if (!isroot)
        free(recs);
    free(ids);
    free(mine);
    free(other);
    if (bridge)
        locus_comm_release(bridge);
    return err;
}

/* MPI_Comm_connect, and MPI_Comm_accept with accept set. */
int locus_comm_connect_impl(int accept, const char *port_name, MPI_Info info, int root,
                            locus_comm_t *comm, MPI_Comm *newcomm)
{
    (void)info;
    *newcomm = MPI_COMM_NULL;
    if (root < 0 || root >= comm->coll.size)
        return MPI_ERR_ROOT;
    if (comm->local)
        return MPI_ERR_COMM; /* an intercommunicator */
    locus_comm_t *n = NULL;
    int err = locus_dyn_meet(accept, comm->coll.rank == root ? port_name : NULL, root, comm,
                             NULL, NULL, &n);
    if (!err)
        *newcomm = locus_comm_handle(n);
    return err;
}
