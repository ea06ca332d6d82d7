/*
 * MPI_Info_create_env gives the same keys and values on every call --
 * before MPI_Init, after it, after the program changed directory -- and
 * the same as MPI_INFO_ENV built from the same argc/argv (MPI-4.1 section
 * 11.2.4: "the same construction as MPI_INFO_ENV"). The values are the
 * job's: command and argv as given, maxprocs the world size, host this
 * node, arch this machine, wdir where the program started, a thread level.
 * Run with arguments so that argv is present.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mtest.h"

#define MAXKEYS 32

/* An info's pairs as plain strings, so infos taken at different times
 * (one before MPI_Init) compare after it. */
typedef struct {
    int n;
    char key[MAXKEYS][MPI_MAX_INFO_KEY + 1];
    char val[MAXKEYS][256];
} pairs_t;

static void pairs_of(MPI_Info info, pairs_t *p)
{
    memset(p, 0, sizeof *p);
    MPI_Info_get_nkeys(info, &p->n);
    if (p->n > MAXKEYS)
        p->n = MAXKEYS;
    for (int i = 0; i < p->n; i++) {
        int len = sizeof p->val[i], flag = 0;
        MPI_Info_get_nthkey(info, i, p->key[i]);
        MPI_Info_get_string(info, p->key[i], &len, p->val[i], &flag);
    }
}

static const char *value(const pairs_t *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->key[i], key) == 0)
            return p->val[i];
    return NULL;
}

static void same(const pairs_t *a, const pairs_t *b, const char *what)
{
    CHECK(a->n == b->n, "%s: %d keys, first call %d", what, b->n, a->n);
    for (int i = 0; i < a->n; i++) {
        const char *v = value(b, a->key[i]);
        CHECK(v && strcmp(v, a->val[i]) == 0, "%s: %s = '%s', first call '%s'", what,
              a->key[i], v ? v : "(missing)", a->val[i]);
    }
}

static pairs_t before, after1, after2, moved, env;

int main(int argc, char **argv)
{
    char start_dir[1024] = "";
    if (!getcwd(start_dir, sizeof start_dir))
        start_dir[0] = '\0';
    MPI_Info info;
    MPI_Info_create_env(argc, argv, &info);
    pairs_of(info, &before);
    MPI_Info_free(&info);

    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Info_create_env(argc, argv, &info);
    pairs_of(info, &after1);
    MPI_Info_free(&info);
    MPI_Info_create_env(argc, argv, &info);
    pairs_of(info, &after2);
    MPI_Info_free(&info);
    CHECK(chdir("/") == 0, "chdir");
    MPI_Info_create_env(argc, argv, &info);
    pairs_of(info, &moved);
    MPI_Info_free(&info);
    pairs_of(MPI_INFO_ENV, &env);

    same(&after1, &before, "before MPI_Init");
    same(&after1, &after2, "second call");
    same(&after1, &moved, "after chdir");
    same(&after1, &env, "MPI_INFO_ENV");

    /* The values themselves. */
    char buf[256];
    struct utsname u;
    const char *v;
    CHECK((v = value(&after1, "command")) && strcmp(v, argv[0]) == 0, "command '%s'",
          v ? v : "(missing)");
    if (argc > 1) {
        buf[0] = '\0';
        for (int i = 1; i < argc; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i > 1 ? " " : "",
                     argv[i]);
        CHECK((v = value(&after1, "argv")) && strcmp(v, buf) == 0, "argv '%s' want '%s'",
              v ? v : "(missing)", buf);
    }
    snprintf(buf, sizeof buf, "%d", size);
    CHECK((v = value(&after1, "maxprocs")) && strcmp(v, buf) == 0, "maxprocs '%s' want %d",
          v ? v : "(missing)", size);
    CHECK(value(&after1, "soft") != NULL, "no soft");
    gethostname(buf, sizeof buf);
    buf[sizeof buf - 1] = '\0';
    CHECK((v = value(&after1, "host")) && strcmp(v, buf) == 0, "host '%s' want '%s'",
          v ? v : "(missing)", buf);
    CHECK(uname(&u) == 0 && (v = value(&after1, "arch")) && strcmp(v, u.machine) == 0,
          "arch '%s' want '%s'", v ? v : "(missing)", u.machine);
    CHECK((v = value(&after1, "wdir")) && strcmp(v, start_dir) == 0, "wdir '%s' want '%s'",
          v ? v : "(missing)", start_dir);
    CHECK((v = value(&after1, "thread_level")) && strncmp(v, "MPI_THREAD_", 11) == 0,
          "thread_level '%s'", v ? v : "(missing)");

    /* Fewer arguments, fewer keys: argc/argv only feed command and argv. */
    MPI_Info_create_env(0, NULL, &info);
    pairs_t none;
    pairs_of(info, &none);
    MPI_Info_free(&info);
    CHECK(!value(&none, "command") && !value(&none, "argv"), "command/argv without argv");
    v = value(&none, "maxprocs");
    const char *want = value(&after1, "maxprocs");
    CHECK(v && want && strcmp(v, want) == 0, "maxprocs without argv");
    return mtest_finish();
}
