/*
 * locus_auth.h — the job's secret and the proof of it (docs/tcp.md, "Who
 * may connect"). Every socket a job listens on for its own ranks (the tcp
 * transport's rails, the roots' address exchange) admits a peer only after
 * it proved that it holds the job's key; the key itself never crosses the
 * wire.
 *
 * The key: 32 bytes. locusrun makes one per job from getrandom() and hands
 * it to the ranks through their environment (LOCUS_JOB_KEY, 64 hex digits,
 * through the proxies, never on a command line). Where locusrun does not
 * start the job (srun, Hydra, Open MPI's mpirun) a rank derives it from the
 * name of the process manager's key-value space, the one value every rank
 * of one job gets alike (guessable by whoever can see the job id: a site
 * that wants better sets LOCUS_JOB_KEY itself).
 *
 * The handshake, on a fresh connection (the acceptor speaks first):
 *
 *   acceptor -> dialler   CHAL   "LAC1" na          (na: 32 random bytes)
 *   dialler  -> acceptor  RESP   "LAR1" nc mac_d    (nc: 32 random bytes)
 *   acceptor -> dialler   PROOF  "LAP1" mac_a       (or "LAN1" + 32 zeros: refused)
 *
 *   mac_d = HMAC-SHA256(key, "D" context 0 na nc)
 *   mac_a = HMAC-SHA256(key, "A" context 0 na nc)
 *
 * so each side proves the key on the other's fresh nonce: a recorded answer
 * is worth nothing on another connection (another na), and one side's
 * proof cannot be reflected as the other's (the role byte); the context
 * ("tcp", "fabric") keeps one service's answers from opening another.
 * Comparisons are constant-time (CRYPTO_memcmp); HMAC and SHA-256 are
 * OpenSSL's libcrypto.
 */
#ifndef LOCUS_AUTH_H
#define LOCUS_AUTH_H

#include <stddef.h>

enum {
    LOCUS_AUTH_KEY_BYTES = 32,
    LOCUS_AUTH_NONCE_BYTES = 32,
    LOCUS_AUTH_MAC_BYTES = 32,
    LOCUS_AUTH_KEY_HEX = 2 * LOCUS_AUTH_KEY_BYTES, /* digits, without the NUL */
    LOCUS_AUTH_CHAL_LEN = 4 + LOCUS_AUTH_NONCE_BYTES,                        /* 36 */
    LOCUS_AUTH_RESP_LEN = 4 + LOCUS_AUTH_NONCE_BYTES + LOCUS_AUTH_MAC_BYTES, /* 68 */
    LOCUS_AUTH_PROOF_LEN = 4 + LOCUS_AUTH_MAC_BYTES,                         /* 36 */
    LOCUS_AUTH_MAGIC_LEN = 4,
};

typedef struct {
    unsigned char k[LOCUS_AUTH_KEY_BYTES];
} locus_auth_key_t;

/* ---- the key ---- */

/* A fresh random key as 64 lowercase hex digits and a NUL into hex (at
 * least LOCUS_AUTH_KEY_HEX + 1 bytes), from getrandom(). 0, or -1 when the
 * kernel gives no randomness (errno says why). */
int locus_auth_key_new_hex(char *hex, size_t cap);

/* Reads a LOCUS_JOB_KEY value: 64 hex digits are the key itself; any other
 * text of at least 16 characters (a passphrase a site hands out) is hashed
 * into one (SHA-256). 0, or -1 with a one-line reason in err. */
int locus_auth_key_parse(const char *s, locus_auth_key_t *key, char *err, size_t errlen);

/* The key every rank of one job derives alike from what its process
 * manager gives them all: SHA-256 of a fixed label and pm_job (the PMI kvs
 * name or PMIx namespace). As secret as pm_job, which is to say not. */
void locus_auth_key_derive(const char *pm_job, locus_auth_key_t *key);

/* key as 64 hex digits and a NUL. */
void locus_auth_key_hex(const locus_auth_key_t *key, char hex[LOCUS_AUTH_KEY_HEX + 1]);

/* Where a rank's key came from (locus_auth_key_job). */
typedef enum {
    LOCUS_AUTH_KEY_ENV,      /* LOCUS_JOB_KEY: locusrun's random key, or the site's */
    LOCUS_AUTH_KEY_DERIVED,  /* from the process manager's job name (srun, Hydra, mpirun) */
} locus_auth_key_source_t;

/*
 * The job's key as a rank of a multi-rank job finds it: LOCUS_JOB_KEY when
 * set; else, under a process manager other than locusrun (by_locusrun 0),
 * derived from pm_job. A rank that locusrun started without a key (a
 * locusrun older than this library, or the variable removed) has none:
 * -1 with a one-line reason in err, as for a malformed LOCUS_JOB_KEY or an
 * empty pm_job. 0 and *key, *source otherwise.
 */
int locus_auth_key_job(const char *pm_job, int by_locusrun, locus_auth_key_t *key,
                       locus_auth_key_source_t *source, char *err, size_t errlen);

/* LOCUS_JOB_KEY only (what a listener reads once the boot layer settled the
 * key for the job). 0, or -1 with a one-line reason when it is unset or
 * malformed. */
int locus_auth_key_env(locus_auth_key_t *key, char *err, size_t errlen);

/* ---- the handshake ---- */

/* One handshake's state, either side. Holds a pointer to the key, which
 * must outlive it. */
typedef struct {
    const locus_auth_key_t *key;
    const char *context;     /* a static string: "tcp", "fabric" */
    unsigned char na[LOCUS_AUTH_NONCE_BYTES];
    unsigned char nc[LOCUS_AUTH_NONCE_BYTES];
} locus_auth_t;

void locus_auth_init(locus_auth_t *a, const locus_auth_key_t *key, const char *context);

/* Acceptor: a fresh challenge into out. 0, or -1 when getrandom() failed. */
int locus_auth_challenge(locus_auth_t *a, unsigned char out[LOCUS_AUTH_CHAL_LEN]);

/* Dialler: the answer to challenge `in`. 0, or -1 when `in` is not a
 * challenge (or getrandom() failed): then nothing is to be sent. */
int locus_auth_answer(locus_auth_t *a, const unsigned char in[LOCUS_AUTH_CHAL_LEN],
                      unsigned char out[LOCUS_AUTH_RESP_LEN]);

/* Acceptor: checks the answer `in` to this handshake's challenge. 0 when
 * it proves the key (out: the acceptor's own proof, to send), -1 when not
 * (out: a refusal, which the acceptor may send or not). */
int locus_auth_check(locus_auth_t *a, const unsigned char in[LOCUS_AUTH_RESP_LEN],
                     unsigned char out[LOCUS_AUTH_PROOF_LEN]);

/* Dialler: checks the acceptor's proof. 0 when it proves the key; -1 when
 * the acceptor refused our answer (it holds another key); -2 when it is no
 * proof (not a rank of this job, or not Locus at all). */
int locus_auth_confirm(const locus_auth_t *a, const unsigned char in[LOCUS_AUTH_PROOF_LEN]);

/* The handshake's messages, for locus_auth_prefix_ok. */
enum { LOCUS_AUTH_MSG_CHAL, LOCUS_AUTH_MSG_RESP, LOCUS_AUTH_MSG_PROOF };

/* Whether the first n bytes received (n <= 4 is enough) can begin a
 * message of kind `msg` (LOCUS_AUTH_MSG_*; a proof may be a refusal): lets
 * a side refuse a stranger's bytes, a forged hello, as soon as they
 * arrive. 1 or 0. */
int locus_auth_prefix_ok(int msg, const unsigned char *p, size_t n);

#endif
