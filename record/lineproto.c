/* InfluxDB 1.x line protocol tokens (record/lineproto.h). */
#include "record/lineproto.h"

#include <stdlib.h>
#include <string.h>

#include "base/termsafe.h"

static const char *specials(enum rm_lp_kind k)
{
    return k == RM_LP_MEASUREMENT ? ", " : k == RM_LP_KEY ? ", =" : "\"\\";
}

/* Printable ASCII only: nothing for termsafe to do. */
static int plain(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f) return 0;
    }
    return 1;
}

static size_t escape_plain(char *dst, const char *s, size_t n, enum rm_lp_kind k)
{
    const char *sp = specials(k);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if ((unsigned char)c < 0x20 || c == 0x7f) c = '?'; /* only without memory: below */
        if (strchr(sp, c)) dst[len++] = '\\';
        dst[len++] = c;
    }
    /* A last backslash would escape the separator after the token: its byte's escape. */
    if (k != RM_LP_STRING && n > 0 && s[n - 1] == '\\') {
        memcpy(dst + len - 1, "\\x5c", 4);
        len += 3;
    }
    return len;
}

size_t rm_lp_escape(char *dst, const char *s, size_t n, enum rm_lp_kind k)
{
    if (plain(s, n)) return escape_plain(dst, s, n, k);
    /* Control characters and bytes that are not UTF-8: the terminal's spelling (at most 4
     * bytes each), then the token's escapes. Without memory for that, escape_plain writes
     * them as '?': the line stays one line. */
    size_t cap = 4 * n + 1;
    char small[1024], *t = cap <= sizeof small ? small : malloc(cap);
    if (!t) return escape_plain(dst, s, n, k);
    size_t tn = rm_term_escape_n(t, cap, s, n);
    if (tn >= cap) tn = cap - 1;
    size_t len = escape_plain(dst, t, tn, k);
    if (t != small) free(t);
    return len;
}
