/* The hot path of value parsing, inline in the readers' per-row loops. */
#ifndef RUNMON_SUMMARY_FASTVALUE_H
#define RUNMON_SUMMARY_FASTVALUE_H

#include <stddef.h>
#include <stdint.h>

/* The number at the start of s: an unsigned decimal of at most 15 digits ("45", "126.35").
 * Returns 1 with *out and *end (where the number stops), or 0 (no digit, too many digits). The
 * same value rm_value_parse gives: one exact division by a power of ten, as rm_parse_decimal. */
static inline int rm_fast_number(const char *s, size_t len, double *out, size_t *end)
{
    static const double p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t m = 0;
    size_t i = 0, digits = 0, frac = 0;
    while (i < len && (unsigned)(s[i] - '0') < 10) {
        m = m * 10 + (uint64_t)(s[i++] - '0');
        digits++;
    }
    if (!digits) return 0;
    if (i < len && s[i] == '.') {
        size_t j = ++i;
        while (i < len && (unsigned)(s[i] - '0') < 10)
            m = m * 10 + (uint64_t)(s[i++] - '0');
        frac = i - j;
        digits += frac;
    }
    if (digits > 15) return 0;
    double v = (double)m;
    *out = frac && m ? v / p10[frac] : v;
    *end = i;
    return 1;
}

/* The common metric field, such a number with an optional unit ("45", "126.35", "300.00 W",
 * "45 %"), parsed inline: the value rm_value_parse gives. Returns 1 with *out, or 0 for
 * anything else (a sign, an exponent, a missing spelling), left to rm_value_parse. */
static inline int rm_fast_value(const char *s, size_t len, double *out)
{
    size_t i;
    double v;
    if (!rm_fast_number(s, len, &v, &i)) return 0;
    if (i < len) { /* blanks, then a unit of letters, '%' and '/' */
        if (s[i] == 'e' || s[i] == 'E') return 0;
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        while (i < len &&
               (((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') || s[i] == '%' || s[i] == '/'))
            i++;
        if (i != len) return 0;
    }
    *out = v;
    return 1;
}

/* What followed the number in a column's last value (" MiB" of "3665 MiB"), up to 7 bytes. */
struct rm_unit_seen {
    unsigned char len;
    char s[7];
};

/* rm_fast_value for a column of values with the same unit (nvidia-smi's own CSV): when the
 * value ends in the unit seen last and the rest is a number, the unit is not read byte by
 * byte again. The same result as rm_fast_value (a unit is remembered only once it passed). */
static inline int rm_fast_value_unit(const char *s, size_t len, struct rm_unit_seen *u, double *out)
{
    size_t ul = u->len, k = 0, end;
    if (ul && len > ul) {
        const char *tail = s + len - ul;
        while (k < ul && tail[k] == u->s[k])
            k++;
        if (k == ul && rm_fast_number(s, len - ul, out, &end) && end == len - ul) return 1;
    }
    if (!rm_fast_number(s, len, out, &end)) return 0;
    if (end == len) return 1; /* no unit */
    if (!rm_fast_value(s, len, out)) return 0;
    if (len - end < sizeof u->s) { /* a unit that passed: remembered */
        u->len = (unsigned char)(len - end);
        for (k = 0; k < u->len; k++)
            u->s[k] = s[end + k];
    }
    return 1;
}

#endif
