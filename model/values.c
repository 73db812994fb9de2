#include "model/values.h"

#include <stdint.h>

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void trim(const char **s, size_t *len)
{
    while (*len && is_blank(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && is_blank((*s)[*len - 1]))
        (*len)--;
}

bool rm_value_is_missing(const char *s, size_t len)
{
    trim(&s, &len);
    if (len == 0) return true;
    if (len == 1 && s[0] == '-') return true;
    if (len == 3 && (s[0] == 'N' || s[0] == 'n') && s[1] == '/' && (s[2] == 'A' || s[2] == 'a'))
        return true;
    return len >= 2 && s[0] == '[' && s[len - 1] == ']';
}

static bool is_unit_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '%' || c == '/';
}

int rm_value_parse(const char *s, size_t len, double *out)
{
    trim(&s, &len);
    /* Numbers first: they are nearly every field. */
    bool numeric = len && ((s[0] >= '0' && s[0] <= '9') || s[0] == '.' || s[0] == '+' ||
                           (s[0] == '-' && len > 1));
    if (!numeric && rm_value_is_missing(s, len)) return RM_VALUE_MISSING;
    double v;
    size_t n = rm_parse_decimal(s, len, &v);
    if (n == 0) return RM_VALUE_BAD;
    while (n < len && (s[n] == ' ' || s[n] == '\t'))
        n++;
    while (n < len && is_unit_char(s[n]))
        n++;
    /* Trailing junk, or a magnitude no GPU or host metric has (keeps every sum finite). */
    if (n != len || !(v > -1e15 && v < 1e15)) return RM_VALUE_BAD;
    *out = v;
    return RM_VALUE_OK;
}

size_t rm_header_name_len(const char *s, size_t len)
{
    while (len && is_blank(s[len - 1]))
        len--;
    if (len && s[len - 1] == ']') {
        size_t i = len;
        while (i > 0 && s[i - 1] != '[')
            i--;
        if (i > 0) len = i - 1;
    }
    while (len && is_blank(s[len - 1]))
        len--;
    return len;
}
