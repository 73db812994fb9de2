#include "base/csvwrite.h"

#include <string.h>

/* The field's length once written: n, or with its quotes and doubled '"' when it needs them. */
static size_t written_len(const char *v, size_t n, int *quote)
{
    size_t need = n;
    *quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (c == ',' || c == '"' || c == '\n' || c == '\r') {
            *quote = 1;
            if (c == '"') need++;
        }
    }
    return *quote ? need + 2 : need;
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
