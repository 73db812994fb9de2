#include "model/dmon_text.h"

#include <string.h>

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool tok_is(const struct rm_dmon_tok *t, const char *s)
{
    size_t n = strlen(s);
    return t->len == n && !memcmp(t->s, s, n);
}

int rm_dmon_find(const struct rm_dmon_line *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (tok_is(&h->tok[i], name)) return (int)i;
    return -1;
}

int rm_dmon_classify(const char *line, size_t len, struct rm_dmon_line *out)
{
    out->kind = RM_DMON_OTHER;
    out->n = 0;
    size_t i = 0;
    while (i < len && blank(line[i]))
        i++;
    bool hash = i < len && line[i] == '#';
    if (hash) i++; /* "#Date" and "# gpu" both start a name right after or after blanks */
    bool overflow = false;
    while (i < len) {
        while (i < len && blank(line[i]))
            i++;
        if (i >= len) break;
        size_t start = i;
        while (i < len && !blank(line[i]))
            i++;
        if (out->n == RM_DMON_MAX_FIELDS) {
            overflow = true;
            break;
        }
        out->tok[out->n].s = line + start;
        out->tok[out->n].len = i - start;
        out->n++;
    }
    if (overflow || out->n == 0) {
        out->n = 0;
        return out->kind = RM_DMON_OTHER;
    }
    if (hash) {
        for (size_t k = 0; k < out->n; k++) {
            if (tok_is(&out->tok[k], "gpu")) return out->kind = RM_DMON_HEADER;
            if (tok_is(&out->tok[k], "Idx")) return out->kind = RM_DMON_UNITS;
        }
        out->n = 0;
        return out->kind = RM_DMON_OTHER;
    }
    const struct rm_dmon_tok *f = &out->tok[0];
    bool digits = f->len > 0;
    for (size_t k = 0; k < f->len; k++)
        if (f->s[k] < '0' || f->s[k] > '9') digits = false;
    if (digits && out->n >= 2) return out->kind = RM_DMON_DATA;
    out->n = 0;
    return out->kind = RM_DMON_OTHER;
}

int rm_dmon_date_time_text(const char *date, size_t date_len, const char *time, size_t time_len,
                           char sep, char out[20])
{
    if (date_len != 8 || time_len != 8) return -1;
    for (size_t i = 0; i < 8; i++)
        if (date[i] < '0' || date[i] > '9') return -1;
    memcpy(out, date, 4);
    out[4] = sep;
    memcpy(out + 5, date + 4, 2);
    out[7] = sep;
    memcpy(out + 8, date + 6, 2);
    out[10] = ' ';
    memcpy(out + 11, time, 8);
    out[19] = '\0';
    return 19;
}
