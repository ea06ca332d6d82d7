/*
 * The calibration cache without measuring (src/util/locus_tune.h): values
 * chosen from made-up rate and time tables (the threshold rules, incomplete
 * tables),
 * the file written and read back, every kind of malformed file refused
 * with the line it is on, sizes written as a user types them (and as
 * locus_parse_size reads them back).
 *
 *   test_tune_choose TMPDIR
 */
#include "locus_tunables.h"
#include "locus_tune.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            failures++;                                                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                         \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
        }                                                                       \
    } while (0)

static const long sizes[] = { 65536, 262144, 1048576, 4194304 };

/* A table of 4 sizes: pipelines of 128k and 32k (the shipped default)
 * chunks, and CMA. */
static void table(locus_tune_t *t, const double *p128, const double *p32, const double *cma)
{
    memset(t, 0, sizeof *t);
    t->nsizes = 4;
    memcpy(t->sizes, sizes, sizeof sizes);
    const double *rows[] = { p128, p32, cma };
    const char *names[] = { "pipe-128k", "pipe-32k", "cma" };
    const long chunk[] = { 131072, 32768, 0 };
    for (int p = 0; p < 3; p++) {
        snprintf(t->paths[p].name, sizeof t->paths[p].name, "%s", names[p]);
        t->paths[p].chunk = chunk[p];
        for (int i = 0; i < 4; i++)
            t->paths[p].gbs[i] = rows[p][i];
    }
    t->npaths = 3;
}

/* The value of `name` chosen in *t is `want` (NULL: none chosen). */
static void expect_value(const locus_tune_t *t, const char *name, const char *want,
                         const char *what)
{
    const char *v = locus_tune_value(t, name);
    CHECK(want ? v && !strcmp(v, want) : !v, "%s: %s %s, expected %s", what, name,
          v ? v : "none", want ? want : "none");
}

static void expect(const locus_tune_t *t, const char *chunk, const char *cma_min, const char *what)
{
    expect_value(t, "LOCUS_SHM_CHUNK_SIZE", chunk, what);
    expect_value(t, "LOCUS_SHM_CMA_MIN", cma_min, what);
}

static int has_note(const locus_tune_t *t, const char *word)
{
    for (int i = 0; i < t->nnotes; i++)
        if (strstr(t->notes[i], word))
            return 1;
    return 0;
}

static void test_choose(void)
{
    locus_tune_t t;
    /* The pipeline always wins: CMA never. 32k wins on the geometric mean
     * although 128k is faster at 64 KiB. */
    table(&t, (double[]){ 20, 20, 20, 20 }, (double[]){ 15, 30, 30, 30 }, (double[]){ 5, 8, 9, 9 });
    locus_tune_choose(&t);
    expect(&t, "32k", LOCUS_TUNE_NEVER, "pipeline wins");

    /* CMA wins from 1 MiB up, also at 64 KiB but not at 256 KiB: the
     * threshold holds for every size above it. */
    table(&t, (double[]){ 10, 20, 10, 5 }, (double[]){ 9, 19, 9, 4 }, (double[]){ 11, 12, 10, 9 });
    locus_tune_choose(&t);
    expect(&t, "128k", "1M", "cma from 1M (ties count for CMA)");

    /* CMA wins everywhere: from the smallest size measured, no bound. */
    table(&t, (double[]){ 5, 5, 5, 5 }, (double[]){ 4, 4, 4, 4 }, (double[]){ 9, 9, 9, 9 });
    locus_tune_choose(&t);
    expect(&t, "128k", "64k", "cma wins");
    expect_value(&t, "LOCUS_SHM_CMA_MAX", NULL, "cma wins");

    /* CMA wins in cache and loses out of it (a Xeon VM's shape): CMA from
     * 64k, the pipeline again from 4M. */
    table(&t, (double[]){ 1, 1, 1, 1 }, (double[]){ 18, 19, 20, 21 }, (double[]){ 25, 31, 22, 12 });
    locus_tune_choose(&t);
    expect(&t, "32k", "64k", "cma in the middle");
    expect_value(&t, "LOCUS_SHM_CMA_MAX", "4M", "cma in the middle");

    /* Two runs: the one CMA gains more over (256k..1M), not the first. */
    table(&t, (double[]){ 1, 1, 1, 1 }, (double[]){ 10, 10, 10, 10 }, (double[]){ 11, 9, 20, 15 });
    locus_tune_choose(&t);
    expect(&t, "32k", "1M", "two runs");
    expect_value(&t, "LOCUS_SHM_CMA_MAX", NULL, "two runs");
    table(&t, (double[]){ 1, 1, 1, 1 }, (double[]){ 10, 10, 10, 10 }, (double[]){ 30, 9, 11, 9 });
    locus_tune_choose(&t);
    expect(&t, "32k", "64k", "two runs, the first gains more");
    expect_value(&t, "LOCUS_SHM_CMA_MAX", "256k", "two runs, the first gains more");

    /* A chunk faster than the shipped default (32k) by less than the
     * noise margin does not move it; by more, it does. */
    table(&t, (double[]){ 10.4, 10.4, 10.4, 10.4 }, (double[]){ 10, 10, 10, 10 },
          (double[]){ 1, 1, 1, 1 });
    locus_tune_choose(&t);
    expect(&t, "32k", LOCUS_TUNE_NEVER, "within the noise");
    table(&t, (double[]){ 11, 11, 11, 11 }, (double[]){ 10, 10, 10, 10 }, (double[]){ 1, 1, 1, 1 });
    locus_tune_choose(&t);
    expect(&t, "128k", LOCUS_TUNE_NEVER, "beyond the noise");

    /* CMA refused (no rates): the chunk is chosen, CMA_MIN stays default. */
    table(&t, (double[]){ 5, 5, 5, 5 }, (double[]){ 6, 6, 6, 6 }, (double[]){ 0, 0, 0, 0 });
    locus_tune_choose(&t);
    expect(&t, "32k", NULL, "no cma");
    CHECK(has_note(&t, "LOCUS_SHM_CMA_MIN keeps its default"), "no cma: note missing");

    /* A chunk cut short at 1 MiB: chunks compared on the sizes both have;
     * the winner incomplete, so no CMA threshold. */
    table(&t, (double[]){ 5, 5, 5, 5 }, (double[]){ 6, 6, 0, 0 }, (double[]){ 1, 1, 1, 1 });
    locus_tune_choose(&t);
    expect(&t, "32k", NULL, "cut short");
    CHECK(has_note(&t, "2 of 4 sizes"), "cut short: note missing");

    /* One chunk never ran: it takes no part. */
    table(&t, (double[]){ 5, 5, 5, 5 }, (double[]){ 0, 0, 0, 0 }, (double[]){ 1, 1, 1, 9 });
    locus_tune_choose(&t);
    expect(&t, "128k", "4M", "one chunk missing");

    /* Nothing measured: nothing chosen, and said. */
    table(&t, (double[]){ 0, 0, 0, 0 }, (double[]){ 0, 0, 0, 0 }, (double[]){ 0, 0, 0, 0 });
    locus_tune_choose(&t);
    expect(&t, NULL, NULL, "nothing");
    CHECK(t.nnotes == 1, "nothing: %d notes", t.nnotes);
}

/* The pair's ways (2k..16k) on top of table()'s paths: segment, messages
 * (a NULL row: that way missing). */
static void pair(locus_tune_t *t, const double *seg, const double *msg)
{
    t->npair_sizes = 4;
    for (int i = 0; i < 4; i++)
        t->pair_sizes[i] = 2048L << i;
    const double *rows[] = { seg, msg };
    const char *names[] = { "segment", "messages" };
    t->nways = 0;
    for (int w = 0; w < 2; w++) {
        if (!rows[w])
            continue;
        snprintf(t->ways[t->nways].name, sizeof t->ways[0].name, "%s", names[w]);
        for (int i = 0; i < 4; i++)
            t->ways[t->nways].us[i] = rows[w][i];
        t->nways++;
    }
}

/* The pair's threshold chosen from the ways' times (seg, msg; NULL: that
 * way missing) on top of a paths table: `want` (NULL: none), checked. */
static void pair_case(locus_tune_t *t, const double *seg, const double *msg, const char *want,
                      const char *what)
{
    static const double p[] = { 5, 5, 5, 5 }, c[] = { 1, 1, 1, 1 };
    table(t, p, p, c);
    if (seg || msg)
        pair(t, seg, msg);
    locus_tune_choose(t);
    expect_value(t, "LOCUS_COLL_PAIR_MSG_MIN", want, what);
}

static void test_choose_pair(void)
{
    locus_tune_t t;
    /* Not measured (an older cache): no value, no note. */
    pair_case(&t, NULL, NULL, NULL, "no pair measured");
    CHECK(!has_note(&t, "LOCUS_COLL_PAIR_MSG_MIN"), "no pair measured: a note");
    /* Messages faster everywhere (a Xeon VM's shape): from the first size. */
    pair_case(&t, (double[]){ 1.20, 1.96, 2.50, 4.21 }, (double[]){ 0.94, 1.37, 2.19, 3.66 },
              "2k", "messages win");
    /* The segment faster everywhere (the EPYC VM's shape): never. */
    pair_case(&t, (double[]){ 0.47, 0.69, 1.20, 1.93 }, (double[]){ 0.62, 0.88, 1.60, 2.67 },
              LOCUS_TUNE_NEVER, "segment wins");
    /* The segment wins small, messages from 8k; a segment win at 4k below
     * a messages win does not move the threshold down past it. */
    pair_case(&t, (double[]){ 0.5, 0.7, 2.0, 4.0 }, (double[]){ 0.6, 0.9, 1.5, 3.0 }, "8k",
              "messages from 8k");
    pair_case(&t, (double[]){ 0.5, 1.0, 1.0, 4.0 }, (double[]){ 0.4, 0.8, 1.5, 3.0 }, "16k",
              "a segment win in the middle");
    /* Within the noise the shipped way (messages) stays. */
    pair_case(&t, (double[]){ 1.00, 1.00, 1.00, 1.00 }, (double[]){ 1.04, 1.04, 1.04, 1.04 },
              "2k", "within the noise");
    /* A way missing or cut short: no value, said. */
    pair_case(&t, (double[]){ 0.5, 0.7, 1.2, 1.9 }, NULL, NULL, "one way missing");
    CHECK(has_note(&t, "LOCUS_COLL_PAIR_MSG_MIN keeps its default"), "one way missing: no note");
    pair_case(&t, (double[]){ 0.5, 0.7, 1.2, 1.9 }, (double[]){ 0.6, 0.8, 0, 0 }, NULL,
              "cut short");
    /* The transport's values are chosen all the same. */
    expect(&t, "32k", LOCUS_TUNE_NEVER, "cut short pair");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_file(const char *dir)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/sub/dir/tune", dir);
    locus_tune_t t, back;
    table(&t, (double[]){ 1.5, 2.25, 3, 4 }, (double[]){ 1, 2, 3, 4.125 }, (double[]){ 0, 1, 2, 9 });
    locus_tune_key_this(&t.key);
    snprintf(t.date, sizeof t.date, "2025-01-01T00:00:00Z");
    snprintf(t.mode, sizeof t.mode, "quick");
    locus_tune_note(&t, "a note\nwith a newline");
    pair(&t, (double[]){ 0.5, 0.75, 1.25, 2 }, (double[]){ 0.625, 0.875, 1.5, 2.5 });
    locus_tune_choose(&t);
    CHECK(locus_tune_write(path, &t, err, sizeof err) == 0, "write: %s", err);
    CHECK(locus_tune_read(path, &back, err, sizeof err) == 0, "read back: %s", err);
    CHECK(locus_tune_key_equal(&t.key, &back.key), "key differs after a round trip");
    CHECK(back.nsizes == 4 && back.npaths == 3 && back.nvalues == t.nvalues &&
          back.nnotes == t.nnotes, "shape differs after a round trip");
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < 4; i++)
            CHECK(back.paths[p].gbs[i] == t.paths[p].gbs[i], "rate %d/%d differs", p, i);
    CHECK(back.npair_sizes == 4 && back.pair_sizes[3] == 16384 && back.nways == 2,
          "pair shape differs after a round trip");
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 4; i++)
            CHECK(back.ways[w].us[i] == t.ways[w].us[i] &&
                  !strcmp(back.ways[w].name, t.ways[w].name), "time %d/%d differs", w, i);
    CHECK(!strcmp(locus_tune_value(&back, "LOCUS_COLL_PAIR_MSG_MIN"), LOCUS_TUNE_NEVER),
          "pair value differs");
    CHECK(!strcmp(back.notes[0], "a note with a newline"), "note: '%s'", back.notes[0]);
    CHECK(!strcmp(locus_tune_value(&back, "LOCUS_SHM_CHUNK_SIZE"), "128k"), "value differs");
    CHECK(!strcmp(back.mode, "quick") && !strcmp(back.date, t.date), "mode/date differ");

    snprintf(path, sizeof path, "%s/nonexistent", dir);
    CHECK(locus_tune_read(path, &back, err, sizeof err) == -1, "missing file: not -1");

    static const struct {
        const char *text, *why;
    } bad[] = {
        { "garbage\n", "line 1: not a locus tune cache" },
        { "format 2\ncpu x\n", "line 1: format 2" },
        { "format 1\ncpu x\ncpus 2\n", "incomplete" },
        { "format 1\ncpu x\ncpus 2\nkernel k\n", "incomplete" },
        { "format 1\ncpu x\ncpus 2\nkernel k\nend\nset LOCUS_SHM_CMA_MIN 1G\n", "line 6: records after" },
        { "format 1\ncpu x\ncpus two\nkernel k\nend\n", "line 3: bad cpus" },
        { "format 1\ncpu x\ncpus 2\nkernel k\nsizes 65536\nrate pipe-64k 1 2\n", "line 6" },
        { "format 1\ncpu x\ncpus 2\nkernel k\nsizes 65536\nrate warp 1\n", "line 6: rate of an unknown path" },
        { "format 1\ncpu x\ncpus 2\nkernel k\nsizes 65536\nrate cma -1\n", "line 6: bad rate" },
        { "format 1\ncpu x\ncpus 2\nkernel k\nset LOCUS_SHM_CHUNK_SIZE lots\n", "line 5: bad value" },
        { "format 1\ncpu x\ncpus 2\nkernel k\nset LOCUS_YIELD 1\n", "line 5: bad value" },
        { "format 1\ncpu x\ncpus 2\nkernel k\nfrobnicate 1\n", "line 5: unknown record" },
        { "format 1\ncpu x\ncpus 2\nkernel k\npair-sizes 2048 x\n", "line 5: bad pair-sizes" },
        { "format 1\ncpu x\ncpus 2\nkernel k\npair-sizes 2048\ntime bus 1\n",
          "line 6: time of an unknown way" },
        { "format 1\ncpu x\ncpus 2\nkernel k\npair-sizes 2048 4096\ntime segment 1\n",
          "line 6: segment has 1 times for 2 sizes" },
        { "format 1\ncpu x\ncpus 2\nkernel k\ntime messages 1\n", "line 5: bad time" },
        { "format 1\ncpu x\ncpus 2\nkernel k\nset LOCUS_COLL_PAIR_MSG_MIN 2k\n"
          "set LOCUS_COLL_PAIR_MSG_MIN many\n", "line 6: bad value" },
    };
    snprintf(path, sizeof path, "%s/bad", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i].text);
        int rc = locus_tune_read(path, &back, err, sizeof err);
        CHECK(rc == -2 && strstr(err, bad[i].why), "bad file %zu: rc %d, '%s' (expected '%s')", i,
              rc, err, bad[i].why);
        CHECK(!strchr(err, '\n'), "bad file %zu: reason is not one line", i);
    }
    /* Comments and blank lines anywhere; a note can say anything. */
    write_text(path, "# hello\n\nformat 1\ncpu A B  C\ncpus 4\nkernel 6.1\n# x\nnote set format 9\nend\n");
    CHECK(locus_tune_read(path, &back, err, sizeof err) == 0 && !strcmp(back.key.cpu, "A B  C"),
          "comments: %s", err);
}

static void test_size_str(void)
{
    static const struct {
        long v;
        const char *s;
    } cases[] = { { 65536, "64k" }, { 4194304, "4M" }, { 1L << 40, "1024G" }, { 1000, "1000" },
                  { 1536, "1536" }, { 1L << 30, "1G" } };
    char s[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long back = -1;
        locus_size_str(s, sizeof s, cases[i].v);
        CHECK(!strcmp(s, cases[i].s), "size %ld: %s, expected %s", cases[i].v, s, cases[i].s);
        CHECK(locus_parse_size(s, &back) == 0 && back == cases[i].v, "%s reads back as %ld", s,
              back);
    }
    CHECK(!strcmp(LOCUS_TUNE_NEVER, "1024G"), "LOCUS_TUNE_NEVER is %s", LOCUS_TUNE_NEVER);
    CHECK(locus_tune_sets("LOCUS_SHM_CHUNK_SIZE") && locus_tune_sets("LOCUS_SHM_CMA_MIN") &&
          locus_tune_sets("LOCUS_COLL_PAIR_MSG_MIN") && !locus_tune_sets("LOCUS_SHM_POOL_SIZE"),
          "locus_tune_sets");
}

/* Rounds' spreads: the widest wins, sizes measured once or never do not
 * count, and spreads within LOCUS_TUNE_UNSTEADY are steady. */
static void test_unsteady(void)
{
    double ratio;
    const double lo[] = { 20, 10.2, 30, 0 }, hi[] = { 22, 36.5, 45, 40 };
    CHECK(locus_tune_unsteady(lo, hi, 4, &ratio) == 1 && ratio > 3.5 && ratio < 3.6,
          "widest spread: got %d (%.2fx), expected 1 (3.58x)",
          locus_tune_unsteady(lo, hi, 4, &ratio), ratio);
    const double slo[] = { 20, 30, 0.5 }, shi[] = { 39, 30, 0.7 };
    CHECK(locus_tune_unsteady(slo, shi, 3, &ratio) == -1 && ratio > 1.94 && ratio < 1.96,
          "steady within %.1fx: got %d (%.2fx)", LOCUS_TUNE_UNSTEADY,
          locus_tune_unsteady(slo, shi, 3, &ratio), ratio);
    const double once[] = { 7, 7 }, none[] = { 0, 0 };
    CHECK(locus_tune_unsteady(once, once, 2, &ratio) == -1 && ratio == 1 &&
              locus_tune_unsteady(none, none, 2, &ratio) == -1,
          "one round or none is steady");
}

/* The median of the rounds: the middle of an odd count, the mean of the
 * two middles of an even one, rounds not measured (0) left out; a path
 * that is fast in one round of five and slow in the others is slow. */
static void test_median(void)
{
    double swings[] = { 2.1, 27.3, 9.8, 3.0, 10.4 }, even[] = { 0, 4, 1, 0, 3, 2 };
    double none[] = { 0, 0, 0 }, one[] = { 5.5 };
    double m = locus_tune_median(swings, 5);
    CHECK(m == 9.8, "median of a swinging path: %.2f, expected 9.80", m);
    m = locus_tune_median(even, 6);
    CHECK(m == 2.5, "median of 1 2 3 4 (two rounds unmeasured): %.2f, expected 2.50", m);
    m = locus_tune_median(none, 3);
    CHECK(m == 0, "median of nothing measured: %.2f, expected 0", m);
    m = locus_tune_median(one, 1);
    CHECK(m == 5.5, "median of one round: %.2f, expected 5.50", m);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_tune_choose TMPDIR\n");
        return 2;
    }
    test_choose();
    test_choose_pair();
    test_file(argv[1]);
    test_size_str();
    test_unsteady();
    test_median();
    if (failures)
        return 1;
    printf(" No Errors\n");
    return 0;
}
