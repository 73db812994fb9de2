/* The hot path of value parsing, inline in the readers' per-row loops. */
#ifndef RUNMON_SUMMARY_FASTVALUE_H
#define RUNMON_SUMMARY_FASTVALUE_H

#include <stddef.h>
#include <stdint.h>

/* The common metric field, an unsigned decimal of at most 15 digits with an optional unit
 * ("45", "126.35", "300.00 W", "45 %"), parsed inline: the same value rm_value_parse gives
 * (one exact division by a power of ten, as rm_parse_decimal does). Returns 1 with *out, or 0
 * for anything else (a sign, an exponent, a missing spelling), left to rm_value_parse. */
static inline int rm_fast_value(const char *s, size_t len, double *out)
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
    if (i < len) { /* blanks, then a unit of letters, '%' and '/' */
        if (s[i] == 'e' || s[i] == 'E') return 0;
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        while (i < len &&
               (((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') || s[i] == '%' || s[i] == '/'))
            i++;
        if (i != len) return 0;
    }
    double v = (double)m;
    *out = frac && m ? v / p10[frac] : v;
    return 1;
}

#endif
