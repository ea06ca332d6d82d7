/*
 * The job key and its challenge-response (locus_auth.h). Nothing here is
 * home-made cryptography: HMAC-SHA256 and SHA-256 are OpenSSL's libcrypto,
 * the nonces and keys come from the kernel (getrandom).
 */
#include "locus_auth.h"
#include "locus_tunables.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

static const unsigned char MAGIC_CHAL[4] = { 'L', 'A', 'C', '1' };
static const unsigned char MAGIC_RESP[4] = { 'L', 'A', 'R', '1' };
static const unsigned char MAGIC_PROOF[4] = { 'L', 'A', 'P', '1' };
static const unsigned char MAGIC_REFUSED[4] = { 'L', 'A', 'N', '1' };

/* Domain labels: a hash made for one purpose is never the input of another. */
#define PASSPHRASE_LABEL "locus job key v1: passphrase"
#define DERIVE_LABEL "locus job key v1: process manager job"

static int random_fill(unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static void sha256_labelled(const char *label, const char *text, unsigned char out[32])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned int len = 0;
    if (md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
        EVP_DigestUpdate(md, label, strlen(label) + 1) == 1 &&
        EVP_DigestUpdate(md, text, strlen(text)) == 1 &&
        EVP_DigestFinal_ex(md, out, &len) == 1 && len == 32) {
        EVP_MD_CTX_free(md);
        return;
    }
    /* libcrypto cannot hash: no key that anyone could share. */
    EVP_MD_CTX_free(md);
    if (random_fill(out, 32) != 0)
        memset(out, 0xa5, 32);
}

void locus_auth_key_hex(const locus_auth_key_t *key, char hex[LOCUS_AUTH_KEY_HEX + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < LOCUS_AUTH_KEY_BYTES; i++) {
        hex[2 * i] = digits[key->k[i] >> 4];
        hex[2 * i + 1] = digits[key->k[i] & 15];
    }
    hex[LOCUS_AUTH_KEY_HEX] = '\0';
}

int locus_auth_key_new_hex(char *hex, size_t cap)
{
    locus_auth_key_t k;
    if (cap < LOCUS_AUTH_KEY_HEX + 1) {
        errno = ENOSPC;
        return -1;
    }
    if (random_fill(k.k, sizeof k.k) != 0)
        return -1;
    locus_auth_key_hex(&k, hex);
    OPENSSL_cleanse(&k, sizeof k);
    return 0;
}

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

int locus_auth_key_parse(const char *s, locus_auth_key_t *key, char *err, size_t errlen)
{
    size_t n = strlen(s);
    size_t hex = strspn(s, "0123456789abcdefABCDEF");
    if (n == LOCUS_AUTH_KEY_HEX && hex == n) {
        for (int i = 0; i < LOCUS_AUTH_KEY_BYTES; i++)
            key->k[i] = (unsigned char)(hexval((unsigned char)s[2 * i]) << 4 |
                                        hexval((unsigned char)s[2 * i + 1]));
        return 0;
    }
    if (n < 16) {
        /* The value itself is never echoed: it is meant to be secret. */
        snprintf(err, errlen, "LOCUS_JOB_KEY is too short (%zu characters): expected 64 hex "
                 "digits or a passphrase of at least 16 characters", n);
        return -1;
    }
    sha256_labelled(PASSPHRASE_LABEL, s, key->k);
    return 0;
}

void locus_auth_key_derive(const char *pm_job, locus_auth_key_t *key)
{
    sha256_labelled(DERIVE_LABEL, pm_job, key->k);
}

int locus_auth_key_env(locus_auth_key_t *key, char *err, size_t errlen)
{
    const char *v = locus_tunable_str("LOCUS_JOB_KEY");
    if (!*v) {
        snprintf(err, errlen, "no job key (LOCUS_JOB_KEY): a rank that accepts connections "
                 "must be started by locusrun or a process manager");
        return -1;
    }
    return locus_auth_key_parse(v, key, err, errlen);
}

int locus_auth_key_job(const char *pm_job, int by_locusrun, locus_auth_key_t *key,
                       locus_auth_key_source_t *source, char *err, size_t errlen)
{
    if (*locus_tunable_str("LOCUS_JOB_KEY")) {
        *source = LOCUS_AUTH_KEY_ENV;
        return locus_auth_key_env(key, err, errlen);
    }
    if (by_locusrun) {
        snprintf(err, errlen, "locusrun gave this rank no job key (LOCUS_JOB_KEY): is locusrun "
                 "older than this library? Set LOCUS_JOB_KEY (64 hex digits) for every rank");
        return -1;
    }
    if (!pm_job || !*pm_job) {
        snprintf(err, errlen, "no job key: LOCUS_JOB_KEY is unset and the process manager "
                 "named no job to derive one from");
        return -1;
    }
    *source = LOCUS_AUTH_KEY_DERIVED;
    locus_auth_key_derive(pm_job, key);
    return 0;
}

/* ---- the handshake ---- */

void locus_auth_init(locus_auth_t *a, const locus_auth_key_t *key, const char *context)
{
    memset(a, 0, sizeof *a);
    a->key = key;
    a->context = context;
}

/* HMAC-SHA256(key, role context NUL na nc). */
static int mac(const locus_auth_t *a, char role, unsigned char out[LOCUS_AUTH_MAC_BYTES])
{
    unsigned char msg[1 + 32 + 1 + 2 * LOCUS_AUTH_NONCE_BYTES];
    size_t cl = strlen(a->context);
    if (cl > 32)
        return -1;
    size_t n = 0;
    msg[n++] = (unsigned char)role;
    memcpy(msg + n, a->context, cl);
    n += cl;
    msg[n++] = 0;
    memcpy(msg + n, a->na, sizeof a->na);
    n += sizeof a->na;
    memcpy(msg + n, a->nc, sizeof a->nc);
    n += sizeof a->nc;
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), a->key->k, LOCUS_AUTH_KEY_BYTES, msg, n, out, &len) ||
        len != LOCUS_AUTH_MAC_BYTES)
        return -1;
    return 0;
}

int locus_auth_challenge(locus_auth_t *a, unsigned char out[LOCUS_AUTH_CHAL_LEN])
{
    if (random_fill(a->na, sizeof a->na) != 0)
        return -1;
    memcpy(out, MAGIC_CHAL, 4);
    memcpy(out + 4, a->na, sizeof a->na);
    return 0;
}

int locus_auth_answer(locus_auth_t *a, const unsigned char in[LOCUS_AUTH_CHAL_LEN],
                      unsigned char out[LOCUS_AUTH_RESP_LEN])
{
    if (memcmp(in, MAGIC_CHAL, 4) != 0)
        return -1;
    memcpy(a->na, in + 4, sizeof a->na);
    if (random_fill(a->nc, sizeof a->nc) != 0)
        return -1;
    memcpy(out, MAGIC_RESP, 4);
    memcpy(out + 4, a->nc, sizeof a->nc);
    return mac(a, 'D', out + 4 + LOCUS_AUTH_NONCE_BYTES);
}

int locus_auth_check(locus_auth_t *a, const unsigned char in[LOCUS_AUTH_RESP_LEN],
                     unsigned char out[LOCUS_AUTH_PROOF_LEN])
{
    unsigned char want[LOCUS_AUTH_MAC_BYTES];
    memcpy(out, MAGIC_REFUSED, 4);
    memset(out + 4, 0, LOCUS_AUTH_MAC_BYTES);
    if (memcmp(in, MAGIC_RESP, 4) != 0)
        return -1;
    memcpy(a->nc, in + 4, sizeof a->nc);
    if (mac(a, 'D', want) != 0 ||
        CRYPTO_memcmp(want, in + 4 + LOCUS_AUTH_NONCE_BYTES, sizeof want) != 0)
        return -1;
    if (mac(a, 'A', out + 4) != 0) {
        memset(out + 4, 0, LOCUS_AUTH_MAC_BYTES);
        return -1;
    }
    memcpy(out, MAGIC_PROOF, 4);
    return 0;
}

int locus_auth_confirm(const locus_auth_t *a, const unsigned char in[LOCUS_AUTH_PROOF_LEN])
{
    unsigned char want[LOCUS_AUTH_MAC_BYTES];
    if (memcmp(in, MAGIC_REFUSED, 4) == 0)
        return -1;
    if (memcmp(in, MAGIC_PROOF, 4) != 0 || mac(a, 'A', want) != 0 ||
        CRYPTO_memcmp(want, in + 4, sizeof want) != 0)
        return -2;
    return 0;
}

int locus_auth_prefix_ok(int msg, const unsigned char *p, size_t n)
{
    n = n < 4 ? n : 4;
    switch (msg) {
    case LOCUS_AUTH_MSG_CHAL:
        return memcmp(p, MAGIC_CHAL, n) == 0;
    case LOCUS_AUTH_MSG_RESP:
        return memcmp(p, MAGIC_RESP, n) == 0;
    case LOCUS_AUTH_MSG_PROOF:
        return memcmp(p, MAGIC_PROOF, n) == 0 || memcmp(p, MAGIC_REFUSED, n) == 0;
    }
    return 0;
}
