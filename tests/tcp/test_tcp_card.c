/*
 * The card codec: a card survives format + parse, and every malformed
 * card (cut short, bad numbers, bad addresses, too many rails, trailing
 * bytes) is refused with a reason rather than read as something else.
 */
#include "tcp.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static void roundtrip(int nrails)
{
    tcp_card_t c = { .nonce = 0xfedcba9876543210ull, .eager_max = 65536, .ncls = 3,
                     .nrails = nrails }, d;
    for (int i = 0; i < nrails; i++) {
        c.addr[i].sin_family = AF_INET;
        c.addr[i].sin_port = htons((uint16_t)(1000 + 7 * i));
        c.addr[i].sin_addr.s_addr = htonl(0xc6120001u + (uint32_t)i); /* 198.18.0.1.. */
    }
    char buf[400], err[200];
    CHECK(tcp_card_format(&c, buf, sizeof buf) == 0, "format %d rails", nrails);
    CHECK(tcp_card_parse(buf, &d, err, sizeof err) == 0, "parse '%s': %s", buf, err);
    CHECK(d.nonce == c.nonce && d.eager_max == c.eager_max && d.ncls == 3 && d.nrails == nrails,
          "fields of '%s'", buf);
    for (int i = 0; i < nrails; i++)
        CHECK(d.addr[i].sin_port == c.addr[i].sin_port &&
              d.addr[i].sin_addr.s_addr == c.addr[i].sin_addr.s_addr, "rail %d of '%s'", i, buf);
    char small[20];
    CHECK(tcp_card_format(&c, small, sizeof small) != 0, "format into a short buffer");
}

int main(void)
{
    for (int n = 1; n <= TCP_MAX_RAILS; n++)
        roundtrip(n);
    static const char *const bad[] = {
        "", "-", "2", "2 ", "3 0 65536 1 1 1.2.3.4:5", "2 xyz 65536 1 1 1.2.3.4:5",
        "2 0 65536 1 0", "2 0 65536 1 9 1.2.3.4:5", "2 0 65536 1 1", "2 0 65536 1 1 1.2.3.4",
        "2 0 65536 1 1 1.2.3.4:0", "2 0 65536 1 1 1.2.3.4:70000", "2 0 65536 1 1 1.2.3.999:5",
        "2 0 65536 1 1 1.2.3.4:5 ", "2 0 65536 1 1 1.2.3.4:5 x", "2 0 65536 1 2 1.2.3.4:5",
        " 2 0 65536 1 1 1.2.3.4:5", "2  0 65536 1 1 1.2.3.4:5", "2 0 -1 1 1 1.2.3.4:5",
        "2 0 99999999999 1 1 1.2.3.4:5", "2 0 65536 1 1 1.2.3.4:+5", "2 0 65536 1 1 ::1:5",
        "2 0 65536 1 1 host:5", "2 0 65536 1 1 1.2.3.4:5\n", "2 0x10 65536 1 1 1.2.3.4:5",
        "2 0 65536 1 1 1.2.3.4:99999999999999999999", "1 0 65536 1 1.2.3.4:5",
        "2 0 65536 0 1 1.2.3.4:5", "2 0 65536 2 1 1.2.3.4:5", "2 0 65536 4 1 1.2.3.4:5", "2 0 65536 1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tcp_card_t c;
        char err[200] = "";
        CHECK(tcp_card_parse(bad[i], &c, err, sizeof err) != 0, "accepted '%s'", bad[i]);
        CHECK(strstr(err, "tcp card") != NULL, "no reason for '%s': '%s'", bad[i], err);
    }
    if (failures) {
        fprintf(stderr, "FAILED: %d check(s)\n", failures);
        return 1;
    }
    printf("No Errors\n");
    return 0;
}
