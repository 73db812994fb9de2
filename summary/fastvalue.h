/* The hot path of value parsing, inline in the readers' per-row loops. */
#ifndef RUNMON_SUMMARY_FASTVALUE_H
#define RUNMON_SUMMARY_FASTVALUE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* After the number that ends at s[i]: nothing, or blanks then a unit of letters, '%' and '/'
 * ("300.00 W", "45 %"); an exponent is rm_value_parse's. Returns 1 with *out = m / 10^frac
 * (one exact division, as rm_parse_decimal does), or 0. */
static inline int rm_fast_value_end(const char *s, size_t len, size_t i, uint64_t m, size_t frac,
                                    double *out)
{
    static const double p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    if (i < len) {
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

/* rm_fast_value byte by byte: any length of number, up to 15 digits. */
static inline int rm_fast_value_bytewise(const char *s, size_t len, double *out)
{
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
    return rm_fast_value_end(s, len, i, m, frac, out);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* s[0..min(len, 8)) as a little-endian word, zero above (len >= 1): never reads outside
 * the len bytes. */
static inline uint64_t rm_fast_load8(const char *s, size_t len)
{
    uint64_t w;
    if (len >= 8) {
        memcpy(&w, s, 8);
        return w;
    }
    if (len >= 4) { /* two words of 4, overlapping */
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + len - 4, 4);
        return (uint64_t)lo | (uint64_t)hi << (8 * (len - 4));
    }
    return (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[len / 2] << (8 * (len / 2)) |
           (uint64_t)(unsigned char)s[len - 1] << (8 * (len - 1));
}

/* The value of the n decimal digits (0..9 each, n <= 8) in the low n bytes of d, the first
 * digit lowest. */
static inline uint64_t rm_fast_digits8(uint64_t d, size_t n)
{
    d <<= 8 * (8 - n); /* the digits to the top, zeros (leading zeros) below */
    d = d * 10 + (d >> 8);
    d = ((d & 0x000000FF000000FFull) * (100 + (1000000ull << 32)) +
         ((d >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32))) >>
        32;
    return (uint32_t)d;
}
#endif

/* The common metric field, an unsigned decimal of at most 15 digits with an optional unit
 * ("45", "126.35", "300.00 W", "45 %"), parsed inline: the same value rm_value_parse gives
 * (one exact division by a power of ten, as rm_parse_decimal does). Returns 1 with *out, or 0
 * for anything else (a sign, an exponent, a missing spelling), left to rm_value_parse.
 * A number within the field's first 8 bytes is read as one word (which bytes are digits, their
 * value by multiplication): a loop per digit cost a mispredicted branch at its end on most
 * fields, a sixth of the summary's time. Others go byte by byte; the answers are the same. */
static inline int rm_fast_value(const char *s, size_t len, double *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (len == 0) return 0;
    uint64_t w = rm_fast_load8(s, len);
    if (w & 0x8080808080808080ull) return rm_fast_value_bytewise(s, len, out);
    /* Byte x = b ^ '0' is a digit's value when below 10: x + 0x76 then keeps its top bit
     * clear (no carry between bytes: every byte is below 0x80). Bytes past len are 0. */
    uint64_t x = w ^ 0x3030303030303030ull;
    uint64_t nondigit = (x + 0x7676767676767676ull) & 0x8080808080808080ull;
    if (!nondigit) return rm_fast_value_bytewise(s, len, out); /* 8 digits or more */
    size_t k = (size_t)__builtin_ctzll(nondigit) >> 3;         /* digits before the first other */
    if (k == 0) return 0;
    if (k >= len || s[k] != '.') return rm_fast_value_end(s, len, k, rm_fast_digits8(x, k), 0, out);
    if (k == 7) return rm_fast_value_bytewise(s, len, out);
    /* A fraction: its digits run from k + 1 to the next byte that is not one. */
    uint64_t after = nondigit & (~0ull << (8 * k + 8));
    if (!after) return rm_fast_value_bytewise(s, len, out);
    size_t j = (size_t)__builtin_ctzll(after) >> 3, frac = j - k - 1;
    uint64_t lowk = (1ull << (8 * k)) - 1; /* k <= 6 */
    uint64_t joined = (x & lowk) | ((x >> (8 * k + 8)) & ((1ull << (8 * frac)) - 1)) << (8 * k);
    return rm_fast_value_end(s, len, j, rm_fast_digits8(joined, k + frac), frac, out);
#else
    return rm_fast_value_bytewise(s, len, out);
#endif
}

#endif
