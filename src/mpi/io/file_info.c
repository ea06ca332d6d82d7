/*
 * file_info.c — the hints a file honours, and the aggregators of
 * collective I/O they choose.
 *
 * The hint names are ROMIO's, so that a program tuned for MPICH or Open
 * MPI's ROMIO tunes Locus the same way. Aggregators are chosen by
 * locality: one per node by default (the node's first rank of the file's
 * communicator), N per node with cb_config_list "*:N", and cb_nodes picks
 * that many of them spread over the nodes (the first of every node before
 * the second of any) -- one process per node talking to the file system
 * is what a parallel file system serves best, and it keeps the exchange
 * between a node's ranks in shared memory. Where the placement gave the
 * ranks NICs (LOCUS_NIC, the nearest one of each rank), a node's further
 * aggregators come from NICs it has no aggregator on yet, so several
 * aggregators of one node drive several rails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

void io_hints_default(io_hints_t *h)
{
    *h = (io_hints_t){ .cb_read = IO_CB_AUTO, .cb_write = IO_CB_AUTO, .cb_nodes = 0,
                       .cb_per_node = 1, .cb_buffer_size = 16u << 20, .ds_read = IO_CB_AUTO,
                       .ds_write = IO_CB_AUTO, .ind_rd_buffer_size = 4u << 20,
                       .ind_wr_buffer_size = 512u << 10, .striping_unit = 0,
                       .striping_factor = 0 };
}

static int get(MPI_Info info, const char *key, char *v, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL ||
        locus_info_get_string_impl(info, key, &len, v, &flag) != MPI_SUCCESS)
        return 0;
    return flag;
}

/* enable / disable / automatic; anything else leaves *mode as it was. */
static void get_mode(MPI_Info info, const char *key, int *mode)
{
    char v[32];
    if (!get(info, key, v, sizeof v))
        return;
    if (strcmp(v, "enable") == 0 || strcmp(v, "true") == 0)
        *mode = IO_CB_ENABLE;
    else if (strcmp(v, "disable") == 0 || strcmp(v, "false") == 0)
        *mode = IO_CB_DISABLE;
    else if (strcmp(v, "automatic") == 0)
        *mode = IO_CB_AUTO;
}

/* A positive size; bad values are ignored (hints may be). */
static void get_size(MPI_Info info, const char *key, size_t *out)
{
    char v[32], *end;
    if (!get(info, key, v, sizeof v))
        return;
    long long n = strtoll(v, &end, 10);
    if (end != v && *end == '\0' && n > 0)
        *out = (size_t)n;
}

void io_hints_parse(io_hints_t *h, MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return;
    size_t n;
    get_mode(info, "romio_cb_read", &h->cb_read);
    get_mode(info, "romio_cb_write", &h->cb_write);
    get_mode(info, "romio_ds_read", &h->ds_read);
    get_mode(info, "romio_ds_write", &h->ds_write);
    /* MPI's own name for collective buffering on both */
    char v[64];
    if (get(info, "collective_buffering", v, sizeof v)) {
        int m = strcmp(v, "true") == 0 ? IO_CB_ENABLE : strcmp(v, "false") == 0 ? IO_CB_DISABLE
                                                                                 : -1;
        if (m >= 0)
            h->cb_read = h->cb_write = m;
    }
    get_size(info, "cb_buffer_size", &h->cb_buffer_size);
    get_size(info, "ind_rd_buffer_size", &h->ind_rd_buffer_size);
    get_size(info, "ind_wr_buffer_size", &h->ind_wr_buffer_size);
    if ((n = 0, get_size(info, "cb_nodes", &n), n > 0))
        h->cb_nodes = n > 1u << 30 ? 1 << 30 : (int)n;
    if ((n = 0, get_size(info, "striping_unit", &n), n > 0))
        h->striping_unit = (long)n;
    if ((n = 0, get_size(info, "striping_factor", &n), n > 0))
        h->striping_factor = (long)n;
    /* cb_config_list: ROMIO's "host:count" list; Locus reads the wildcard
     * form "*:N" (N aggregators on every node, "*" for all its ranks). */
    if (get(info, "cb_config_list", v, sizeof v) && strncmp(v, "*:", 2) == 0) {
        if (strcmp(v + 2, "*") == 0)
            h->cb_per_node = 1 << 30;
        else if (atoi(v + 2) > 0)
            h->cb_per_node = atoi(v + 2);
    }
}

int io_hints_agree(locus_file_t *f)
{
    /* Rank 0's hints for all: the two-phase rounds are counted from them,
     * and ranks counting differently would wait on each other forever. */
    int err = locus_coll_bcast(&f->hints, sizeof f->hints, locus_dtype_basic(LOCUS_EL_BYTE), 0,
                               &f->comm->coll);
    return err == MPI_SUCCESS ? io_aggs_choose(f) : err;
}

int io_nics_learn(locus_file_t *f)
{
    locus_coll_comm_t *cc = &f->comm->coll;
    const char *nic = getenv("LOCUS_NIC");
    int mine = 0;
    /* a hash (FNV-1a): equal names give equal ids on every node */
    for (const char *p = nic ? nic : ""; *p; p++)
        mine = (int)(((unsigned)mine ^ (unsigned char)*p) * 16777619u);
    free(f->nic_of);
    f->nic_of = malloc((size_t)cc->size * sizeof *f->nic_of);
    if (!f->nic_of)
        return MPI_ERR_NO_MEM;
    locus_dtype_t *i = locus_dtype_basic(LOCUS_EL_INT);
    return locus_coll_allgather(&mine, 1, i, f->nic_of, 1, i, cc);
}

/* The order ranks are offered in: first the first rank of each (node,
 * NIC) pair, then the others, each group by rank. */
typedef struct {
    int node, nic, rank;
} nic_key_t;

static int cmp_key(const void *a, const void *b)
{
    const nic_key_t *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->nic != y->nic)
        return x->nic < y->nic ? -1 : 1;
    return x->rank - y->rank;
}

static int *offer_order(const locus_file_t *f, const int *node_of)
{
    int size = f->comm->coll.size, n = 0;
    nic_key_t *k = malloc((size_t)size * sizeof *k);
    int *order = malloc((size_t)size * sizeof *order), *first = calloc((size_t)size, sizeof *first);
    if (!k || !order || !first) {
        free(k), free(order), free(first);
        return NULL;
    }
    for (int r = 0; r < size; r++)
        k[r] = (nic_key_t){ node_of[r], f->nic_of ? f->nic_of[r] : 0, r };
    qsort(k, (size_t)size, sizeof *k, cmp_key);
    for (int i = 0; i < size; i++)
        first[k[i].rank] = i == 0 || k[i].node != k[i - 1].node || k[i].nic != k[i - 1].nic;
    for (int pass = 1; pass >= 0; pass--)
        for (int r = 0; r < size; r++)
            if (first[r] == pass)
                order[n++] = r;
    free(k);
    free(first);
    return order;
}

int io_aggs_choose(locus_file_t *f)
{
    locus_coll_comm_t *cc = &f->comm->coll;
    int size = cc->size, nn = cc->num_nodes > 0 ? cc->num_nodes : 1;
    int *pick = malloc((size_t)size * sizeof *pick), *taken = calloc((size_t)size, sizeof *taken);
    int *seen = calloc((size_t)nn, sizeof *seen), *node_of = malloc((size_t)size * sizeof *node_of);
    for (int r = 0; node_of && r < size; r++) {
        node_of[r] = cc->node_of ? cc->node_of[r] : 0;
        if (node_of[r] < 0 || node_of[r] >= nn)
            node_of[r] = 0;
    }
    int *order = node_of ? offer_order(f, node_of) : NULL;
    if (!pick || !taken || !seen || !order) {
        free(pick), free(taken), free(seen), free(node_of), free(order);
        return MPI_ERR_NO_MEM;
    }
    /* Rounds over the nodes: in round k each node offers its k-th rank
     * (in offer order), up to cb_per_node of them. */
    int want = f->hints.cb_nodes > 0 ? f->hints.cb_nodes : size;
    int per = f->hints.cb_nodes > 0 ? size : f->hints.cb_per_node;
    int n = 0;
    for (int k = 0; k < per && n < want; k++) {
        int added = 0;
        for (int i = 0; i < nn; i++)
            seen[i] = 0;
        for (int i = 0; i < size && n < want; i++) {
            int r = order[i], node = node_of[r];
            if (taken[r] || seen[node])
                continue;
            /* r is the first untaken rank of its node this round (a
             * NIC without an aggregator first) */
            seen[node] = 1;
            taken[r] = 1;
            pick[n++] = r;
            added++;
        }
        if (!added)
            break;
    }
    n = 0;
    for (int r = 0; r < size; r++)
        if (taken[r])
            pick[n++] = r;
    free(taken);
    free(seen);
    free(node_of);
    free(order);
    free(f->aggs);
    f->aggs = pick;
    f->naggs = n > 0 ? n : 1;
    if (n == 0)
        pick[0] = 0;
    return MPI_SUCCESS;
}

static const char *mode_name(int m)
{
    return m == IO_CB_ENABLE ? "enable" : m == IO_CB_DISABLE ? "disable" : "automatic";
}

int io_hints_info(const locus_file_t *f, MPI_Info *out)
{
    const io_hints_t *h = &f->hints;
    MPI_Info info;
    int err = locus_info_create_impl(&info);
    if (err != MPI_SUCCESS)
        return err;
    char v[64], list[64], aggs[256] = "";
    /* the aggregators' ranks, as far as they fit */
    for (int i = 0, at = 0; i < f->naggs && at < (int)sizeof aggs - 16; i++)
        at += snprintf(aggs + at, sizeof aggs - (size_t)at, "%s%d", i ? "," : "", f->aggs[i]);
    if (h->cb_per_node >= 1 << 30)
        snprintf(list, sizeof list, "*:*");
    else
        snprintf(list, sizeof list, "*:%d", h->cb_per_node);
    struct {
        const char *key;
        long long num;
        const char *str;
    } rows[] = {
        { "cb_buffer_size", (long long)h->cb_buffer_size, NULL },
        { "romio_cb_read", 0, mode_name(h->cb_read) },
        { "romio_cb_write", 0, mode_name(h->cb_write) },
        { "cb_nodes", f->naggs, NULL },
        { "cb_config_list", 0, list },
        { "romio_ds_read", 0, mode_name(h->ds_read) },
        { "romio_ds_write", 0, mode_name(h->ds_write) },
        { "ind_rd_buffer_size", (long long)h->ind_rd_buffer_size, NULL },
        { "ind_wr_buffer_size", (long long)h->ind_wr_buffer_size, NULL },
        { "striping_unit", h->striping_unit, NULL },
        { "striping_factor", h->striping_factor, NULL },
        { "romio_no_indep_rw", 0, "false" },
        { "filename", 0, f->name },
        { "locus_aggregators", 0, aggs },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && err == MPI_SUCCESS; i++) {
        if (!rows[i].str)
            snprintf(v, sizeof v, "%lld", rows[i].num);
        err = locus_info_set_impl(info, rows[i].key, rows[i].str ? rows[i].str : v);
    }
    if (err != MPI_SUCCESS) {
        PMPI_Info_free(&info);
        return err;
    }
    *out = info;
    return MPI_SUCCESS;
}
