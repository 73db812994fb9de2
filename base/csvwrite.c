#include "base/csvwrite.h"

#include <stdint.h>
#include <string.h>

/* Bytes that make a field need quotes; 2 marks the '"' that is also doubled. */
static const unsigned char quote_class[256] = {[','] = 1, ['"'] = 2, ['\n'] = 1, ['\r'] = 1};

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Nonzero when one of the 8 bytes of w is b (the classic has-zero-byte test on w ^ b). */
static inline uint64_t has_byte(uint64_t w, unsigned char b)
{
    uint64_t x = w ^ (ONES * b);
    return (x - ONES) & ~x & HIGHS;
}

/* The field's length once written: n, or with its quotes and doubled '"' when it needs them.
 * Every field of every row the collectors write passes here, and almost none needs quotes:
 * 8 bytes at a time find that out, the table counts the rare field that does. */
static size_t written_len(const char *v, size_t n, int *quote)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, v + i, 8);
        if (has_byte(w, ',') | has_byte(w, '"') | has_byte(w, '\n') | has_byte(w, '\r')) break;
    }
    unsigned any = 0; /* the bytes before i hold no special byte */
    size_t doubled = 0;
    for (size_t j = i; j < n; j++) {
        unsigned k = quote_class[(unsigned char)v[j]];
        any |= k;
        doubled += k >> 1;
    }
    *quote = any != 0;
    return any ? n + doubled + 2 : n;
}

size_t rm_csv_put_field(char *out, size_t cap, const char *v, size_t n)
{
    int quote;
    if (written_len(v, n, &quote) > cap) return 0;
    if (!quote) {
        memcpy(out, v, n);
        return n;
    }
    char *p = out;
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '"') *p++ = '"';
        *p++ = v[i];
    }
    *p++ = '"';
    return (size_t)(p - out);
}

int rm_csv_fput_field(FILE *out, const char *v, size_t n)
{
    int quote;
    written_len(v, n, &quote);
    if (!quote) return fwrite(v, 1, n, out) == n ? 0 : EOF;
    int rc = fputc('"', out) == EOF ? EOF : 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if ((v[i] == '"' && fputc('"', out) == EOF) || fputc(v[i], out) == EOF) rc = EOF;
    if (rc == 0 && fputc('"', out) == EOF) rc = EOF;
    return rc;
}

/* [+-]digits[.digits][(e|E)[+-]digits], or [+-].digits...: a number, nothing else. */
static int plain_number(const char *v, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (v[i] == '+' || v[i] == '-')) i++;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++)
        digits++;
    if (i < n && v[i] == '.')
        for (i++; i < n && v[i] >= '0' && v[i] <= '9'; i++)
            digits++;
    if (!digits) return 0;
    if (i < n && (v[i] == 'e' || v[i] == 'E')) {
        size_t e = 0;
        if (++i < n && (v[i] == '+' || v[i] == '-')) i++;
        for (; i < n && v[i] >= '0' && v[i] <= '9'; i++)
            e++;
        if (!e) return 0;
    }
    return i == n;
}

int rm_csv_formula_like(const char *v, size_t n)
{
    return n > 0 && strchr("=+-@\t\r", v[0]) && v[0] != '\0' && !plain_number(v, n);
}
