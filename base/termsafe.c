/* Escaping untrusted text for a terminal: see termsafe.h for the rule. */
#include "base/termsafe.h"

#include <stdlib.h>
#include <string.h>

#include "base/csvwrite.h"

/* Length of the valid UTF-8 sequence starting at s (n bytes left), or 0 when the byte at s
 * does not start one (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return len;
}

/* The next unit of output for the bytes at s: its text in out (at most 8 bytes, not
 * NUL-terminated), its length as the return value, the bytes it stands for in *used and the
 * characters it takes on a terminal in *cols. */
static size_t next_unit(const unsigned char *s, size_t n, char out[8], size_t *used, int *cols)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char c = s[0];
    size_t len = c < 0x80 ? 1 : utf8_len(s, n);
    /* C1 controls are valid UTF-8 (c2 80 .. c2 9f) but a terminal may obey them. */
    int control = c < 0x20 || c == 0x7f || (len == 2 && c == 0xc2 && s[1] <= 0x9f);
    if (len > 0 && !control) {
        memcpy(out, s, len);
        *used = len;
        *cols = 1;
        return len;
    }
    if (control && len == 2) { /* a C1 control: both its bytes */
        const char e[8] = {'\\', 'x', hex[c >> 4],    hex[c & 15],
                           '\\', 'x', hex[s[1] >> 4], hex[s[1] & 15]};
        memcpy(out, e, 8);
        *used = 2;
        *cols = 8;
        return 8;
    }
    *used = 1;
    char named = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : 0;
    if (named) {
        out[0] = '\\';
        out[1] = named;
        *cols = 2;
        return 2;
    }
    out[0] = '\\';
    out[1] = 'x';
    out[2] = hex[c >> 4];
    out[3] = hex[c & 15];
    *cols = 4;
    return 4;
}

/* Escapes into dst (cap > 0), stopping before a unit that does not fit or would pass
 * maxcols characters (maxcols < 0: no limit). Returns the whole escaped length; *ncols gets
 * the characters written. */
static size_t escape(char *dst, size_t cap, const char *s, size_t len, int maxcols, int *ncols)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t total = 0, w = 0;
    int cols = 0, full = cap == 0;
    while (len > 0) {
        char u[8];
        size_t used;
        int uc;
        size_t ul = next_unit(p, len, u, &used, &uc);
        if (!full && (w + ul >= cap || (maxcols >= 0 && cols + uc > maxcols))) full = 1;
        if (!full) {
            memcpy(dst + w, u, ul);
            w += ul;
            cols += uc;
        }
        total += ul;
        p += used;
        len -= used;
    }
    if (cap) dst[w] = '\0';
    if (ncols) *ncols = cols;
    return total;
}

size_t rm_term_escape_n(char *dst, size_t cap, const char *s, size_t len)
{
    return escape(dst, cap, s ? s : "", s ? len : 0, -1, NULL);
}

size_t rm_term_escape(char *dst, size_t cap, const char *s)
{
    return rm_term_escape_n(dst, cap, s, s ? strlen(s) : 0);
}

const char *rm_term_cell(char *dst, size_t cap, const char *s, int width, int maxcols)
{
    if (cap == 0) return dst;
    int cols;
    escape(dst, cap, s ? s : "", s ? strlen(s) : 0, maxcols, &cols);
    size_t w = strlen(dst);
    while (cols < width && w + 1 < cap) {
        dst[w++] = ' ';
        cols++;
    }
    dst[w] = '\0';
    return dst;
}

int rm_fput_safe(FILE *out, const char *s)
{
    if (!s) return 0;
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    while (len > 0) {
        /* Runs of plain printable ASCII go out as they are. */
        size_t run = 0;
        while (run < len && p[run] >= 0x20 && p[run] < 0x7f)
            run++;
        if (run) {
            if (fwrite(p, 1, run, out) != run) return EOF;
            p += run;
            len -= run;
            continue;
        }
        char u[8];
        size_t used;
        int uc;
        size_t ul = next_unit(p, len, u, &used, &uc);
        if (fwrite(u, 1, ul, out) != ul) return EOF;
        p += used;
        len -= used;
    }
    return 0;
}

int rm_csv_put(FILE *out, const char *s, int how)
{
    if (!s) return 0;
    char small[512], *text = small;
    if (how & RM_CSV_TERM) {
        size_t n = rm_term_escape(small, sizeof small, s);
        if (n >= sizeof small) {
            text = malloc(n + 1);
            if (!text) return EOF;
            rm_term_escape(text, n + 1, s);
        }
    } else {
        text = (char *)s;
    }
    size_t n = strlen(text);
    int rc;
    if ((how & RM_CSV_SAFE) && rm_csv_formula_like(text, n)) {
        char *g = malloc(n + 2); /* ' and the text: one field, quoted as it must be */
        if (g) {
            g[0] = '\'';
            memcpy(g + 1, text, n + 1);
        }
        rc = g ? rm_csv_fput_field(out, g, n + 1) : EOF;
        free(g);
    } else {
        rc = rm_csv_fput_field(out, text, n); /* the one quoting rule */
    }
    if (text != small && text != s) free(text);
    return rc;
}
