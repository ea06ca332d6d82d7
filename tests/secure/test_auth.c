/*
 * The job key and its challenge-response (locus_auth.h), in one process:
 * both sides of every handshake are played here, so each rule is checked
 * on its own: the right key is admitted both ways; a wrong key, an answer
 * replayed on another challenge, the acceptor's proof reflected as an
 * answer, another service's answer, a tampered nonce and a forged proof
 * are refused.
 */
#include "locus_auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static const char HEX[] = "00112233445566778899aabbccddeeff0123456789ABCDEFfedcba9876543210";

/* One whole handshake: 0 when both sides accepted each other. */
static int handshake(const locus_auth_key_t *acc_key, const locus_auth_key_t *dial_key,
                     const char *acc_ctx, const char *dial_ctx, int *acc_rc, int *dial_rc)
{
    locus_auth_t acc, dial;
    unsigned char chal[LOCUS_AUTH_CHAL_LEN], resp[LOCUS_AUTH_RESP_LEN], proof[LOCUS_AUTH_PROOF_LEN];
    locus_auth_init(&acc, acc_key, acc_ctx);
    locus_auth_init(&dial, dial_key, dial_ctx);
    CHECK(locus_auth_challenge(&acc, chal) == 0, "challenge");
    CHECK(locus_auth_answer(&dial, chal, resp) == 0, "answer");
    *acc_rc = locus_auth_check(&acc, resp, proof);
    *dial_rc = locus_auth_confirm(&dial, proof);
    return *acc_rc == 0 && *dial_rc == 0 ? 0 : -1;
}

static void keys(void)
{
    locus_auth_key_t k, k2;
    char err[256], hex[LOCUS_AUTH_KEY_HEX + 1], hex2[LOCUS_AUTH_KEY_HEX + 1];
    CHECK(locus_auth_key_parse(HEX, &k, err, sizeof err) == 0, "hex key: %s", err);
    CHECK(k.k[0] == 0x00 && k.k[1] == 0x11 && k.k[16] == 0x01 && k.k[23] == 0xef &&
          k.k[31] == 0x10, "hex key bytes");
    locus_auth_key_hex(&k, hex);
    CHECK(strlen(hex) == 64 && strncmp(hex, "00112233", 8) == 0 &&
          strcmp(hex + 32, "0123456789abcdeffedcba9876543210") == 0, "hex out: %s", hex);
    CHECK(locus_auth_key_new_hex(hex, sizeof hex) == 0 &&
          locus_auth_key_new_hex(hex2, sizeof hex2) == 0, "new keys");
    CHECK(strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64 && strcmp(hex, hex2) != 0,
          "two new keys: %s %s", hex, hex2);
    CHECK(locus_auth_key_new_hex(hex, 64) == -1, "a buffer too short for the NUL");
    /* A passphrase: hashed, the same every time, another one another key. */
    CHECK(locus_auth_key_parse("correct horse battery staple", &k, err, sizeof err) == 0,
          "passphrase: %s", err);
    CHECK(locus_auth_key_parse("correct horse battery staple", &k2, err, sizeof err) == 0 &&
          memcmp(&k, &k2, sizeof k) == 0, "passphrase not deterministic");
    CHECK(locus_auth_key_parse("correct horse battery stapler", &k2, err, sizeof err) == 0 &&
          memcmp(&k, &k2, sizeof k) != 0, "two passphrases, one key");
    /* 63 hex digits are a (short) passphrase, not a key with a digit missing. */
    CHECK(locus_auth_key_parse(HEX + 1, &k2, err, sizeof err) == 0, "63 digits");
    CHECK(locus_auth_key_parse("hunter2", &k, err, sizeof err) == -1 &&
          strstr(err, "too short") && !strstr(err, "hunter2"), "short key: '%s'", err);
    /* Derived from the process manager's job: same name, same key. */
    locus_auth_key_derive("kvs_1234_0_5678_node1", &k);
    locus_auth_key_derive("kvs_1234_0_5678_node1", &k2);
    CHECK(memcmp(&k, &k2, sizeof k) == 0, "derivation not deterministic");
    locus_auth_key_derive("kvs_1235_0_5678_node1", &k2);
    CHECK(memcmp(&k, &k2, sizeof k) != 0, "two jobs, one derived key");
    /* The job's key as a rank finds it. */
    locus_auth_key_source_t src;
    unsetenv("LOCUS_JOB_KEY");
    CHECK(locus_auth_key_env(&k, err, sizeof err) == -1 && strstr(err, "no job key"),
          "env without a key: '%s'", err);
    CHECK(locus_auth_key_job("kvs_1", 0, &k, &src, err, sizeof err) == 0 &&
          src == LOCUS_AUTH_KEY_DERIVED, "derived under another process manager");
    CHECK(locus_auth_key_job("kvs_1", 1, &k, &src, err, sizeof err) == -1 &&
          strstr(err, "locusrun gave this rank no job key"), "locusrun without a key: '%s'", err);
    CHECK(locus_auth_key_job("", 0, &k, &src, err, sizeof err) == -1, "no job name, no key");
    setenv("LOCUS_JOB_KEY", HEX, 1);
    CHECK(locus_auth_key_job("kvs_1", 1, &k2, &src, err, sizeof err) == 0 &&
          src == LOCUS_AUTH_KEY_ENV && k2.k[1] == 0x11, "the environment's key");
    setenv("LOCUS_JOB_KEY", "short", 1);
    CHECK(locus_auth_key_job("kvs_1", 0, &k2, &src, err, sizeof err) == -1,
          "a bad LOCUS_JOB_KEY is an error, not a reason to derive");
    unsetenv("LOCUS_JOB_KEY");
}

static void handshakes(void)
{
    locus_auth_key_t key, other;
    char err[256];
    locus_auth_key_parse(HEX, &key, err, sizeof err);
    other = key;
    other.k[31] ^= 0x80;
    int a, d;
    /* The right key, both ways. */
    CHECK(handshake(&key, &key, "tcp", "tcp", &a, &d) == 0, "right key: %d %d", a, d);
    /* A wrong key: the acceptor refuses, and the dialler reads a refusal. */
    CHECK(handshake(&key, &other, "tcp", "tcp", &a, &d) != 0 && a == -1 && d == -1,
          "wrong key: acceptor %d dialler %d", a, d);
    /* Another service's answer (same key) opens nothing. */
    CHECK(handshake(&key, &key, "tcp", "fabric", &a, &d) != 0 && a == -1,
          "another context: acceptor %d", a);

    locus_auth_t acc1, acc2, dial;
    unsigned char chal1[LOCUS_AUTH_CHAL_LEN], chal2[LOCUS_AUTH_CHAL_LEN];
    unsigned char resp[LOCUS_AUTH_RESP_LEN], proof[LOCUS_AUTH_PROOF_LEN];
    unsigned char forged[LOCUS_AUTH_RESP_LEN];
    locus_auth_init(&acc1, &key, "tcp");
    locus_auth_init(&acc2, &key, "tcp");
    locus_auth_init(&dial, &key, "tcp");
    locus_auth_challenge(&acc1, chal1);
    locus_auth_challenge(&acc2, chal2);
    CHECK(memcmp(chal1 + 4, chal2 + 4, LOCUS_AUTH_NONCE_BYTES) != 0, "two equal challenges");
    CHECK(locus_auth_answer(&dial, chal1, resp) == 0, "answer");
    /* The right answer to challenge 1, replayed on challenge 2. */
    CHECK(locus_auth_check(&acc2, resp, proof) == -1 && locus_auth_confirm(&dial, proof) == -1,
          "replayed answer admitted");
    /* A tampered nonce in the answer. */
    memcpy(forged, resp, sizeof forged);
    forged[5] ^= 1;
    CHECK(locus_auth_check(&acc1, forged, proof) == -1, "tampered nonce admitted");
    /* The real one, on its own challenge. */
    CHECK(locus_auth_check(&acc1, resp, proof) == 0 && locus_auth_confirm(&dial, proof) == 0,
          "right answer refused");
    /* The acceptor's proof reflected as an answer: the role byte tells. */
    memcpy(forged, "LAR1", 4);
    memcpy(forged + 4, resp + 4, LOCUS_AUTH_NONCE_BYTES);
    memcpy(forged + 4 + LOCUS_AUTH_NONCE_BYTES, proof + 4, LOCUS_AUTH_MAC_BYTES);
    locus_auth_t acc3 = acc1;
    CHECK(locus_auth_check(&acc3, forged, proof) == -1, "reflected proof admitted");
    /* A forged proof: the dialler takes it for no proof at all (-2). */
    unsigned char fake[LOCUS_AUTH_PROOF_LEN];
    memcpy(fake, "LAP1", 4);
    memset(fake + 4, 0x42, LOCUS_AUTH_MAC_BYTES);
    CHECK(locus_auth_confirm(&dial, fake) == -2, "forged proof accepted");
    memset(fake, 0, sizeof fake);
    CHECK(locus_auth_confirm(&dial, fake) == -2, "zeros accepted");
    /* Not a challenge: nothing to answer. */
    unsigned char hello[LOCUS_AUTH_CHAL_LEN] = "LCL1 a hello, not a challenge";
    CHECK(locus_auth_answer(&dial, hello, resp) == -1, "answered a non-challenge");
    /* First bytes: a forged hello is told apart at its first byte. */
    CHECK(locus_auth_prefix_ok(LOCUS_AUTH_MSG_RESP, (const unsigned char *)"LA", 2) &&
          !locus_auth_prefix_ok(LOCUS_AUTH_MSG_RESP, (const unsigned char *)"LCL1", 4) &&
          !locus_auth_prefix_ok(LOCUS_AUTH_MSG_RESP, (const unsigned char *)"X", 1) &&
          locus_auth_prefix_ok(LOCUS_AUTH_MSG_PROOF, (const unsigned char *)"LAN1", 4) &&
          locus_auth_prefix_ok(LOCUS_AUTH_MSG_CHAL, (const unsigned char *)"LAC1", 4) &&
          locus_auth_prefix_ok(LOCUS_AUTH_MSG_RESP, (const unsigned char *)"", 0),
          "prefixes");
}

int main(void)
{
    keys();
    handshakes();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf(" No Errors\n");
    return 0;
}
