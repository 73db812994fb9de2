/* HTML escaping for everything in the report that came from outside. */
#include <stdint.h>
#include <string.h>

#include "report/report.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    /* C1 controls (U+0080..U+009F) are not text either. */
    if (len == 2 && cp < 0xA0) return 0;
    return len;
}

void rm_html_escape(FILE *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        switch (c) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        case '\t':
        case '\n':
            fputc(c, out);
            break;
        default:
            if (c < 0x20 || c == 0x7F) {
                fputc(' ', out);
            } else if (c < 0x80) {
                fputc(c, out);
            } else {
                size_t l = utf8_len(s + i, len - i);
                if (l == 0) {
                    fputs("\xEF\xBF\xBD", out); /* U+FFFD */
                } else {
                    fwrite(s + i, 1, l, out);
                    i += l;
                    continue;
                }
            }
        }
        i++;
    }
}

void rm_html_escape_str(FILE *out, const char *s)
{
    if (s) rm_html_escape(out, s, strlen(s));
}

void rm_html_name(FILE *out, const char *s)
{
    if (!s) return;
    size_t n = 0, cut = 0, len = strlen(s);
    for (size_t i = 0; i < len; i++)
        if ((((unsigned char)s[i]) & 0xc0) != 0x80 && n++ == RM_HTML_NAME_MAX - 1) cut = i;
    if (n <= RM_HTML_NAME_MAX) {
        rm_html_escape(out, s, len);
        return;
    }
    fputs("<span class=\"cut\" title=\"", out);
    rm_html_escape(out, s, len);
    fputs("\">", out);
    rm_html_escape(out, s, cut);
    fputs("&#8230;</span>", out);
}
