/* InfluxDB 1.x line protocol: one token of a line (a measurement name, a tag key or value, a
 * field key, a string field's value) escaped so that influxd reads back the text it came from.
 * docs/FORMATS.md, "InfluxDB line protocol", says the rules; tests/e2e/test_export_influx.sh
 * checks them against a real influxd.
 *
 * What influxd 1.x does (models/points.go): in a measurement, a backslash before a comma or a
 * space escapes it; in tag keys, tag values and field keys, before a comma, `=` or a space;
 * every other backslash is kept as it is. A separator is any such character whose previous
 * byte is not a backslash, so a token cannot end in a backslash: that backslash would escape
 * the separator after it (`host=a\,cpu=all` broke every line). In a string field's value
 * `\"` and `\\` stand for `"` and `\`.
 *
 * So, byte by byte:
 *   - a control character (C0, DEL, C1) or a byte that is not valid UTF-8 is written as
 *     base/termsafe.h writes it for a terminal: `\n`, `\r`, `\t`, else `\xNN` (a newline
 *     would end the line; influxd takes UTF-8). Not reversible, but always one line;
 *   - then the token's specials get a backslash (string values: `"` and `\`);
 *   - a backslash that would end a measurement, key or tag value is written `\x5c` (the
 *     termsafe spelling of its byte), so the token never escapes the separator after it.
 */
#ifndef RUNMON_RECORD_LINEPROTO_H
#define RUNMON_RECORD_LINEPROTO_H

#include <stddef.h>

enum rm_lp_kind {
    RM_LP_MEASUREMENT, /* a measurement name: comma and space */
    RM_LP_KEY,         /* a tag key, a tag value or a field key: comma, `=` and space */
    RM_LP_STRING,      /* a string field's value, without its double quotes: `"` and `\` */
};

/* The longest escape of n bytes: what a caller reserves before rm_lp_escape. */
#define RM_LP_ESCAPED_MAX(n) (8 * (n) + 8)

/* Escapes the n bytes at s as a token of kind k into dst (no NUL is written). dst has room
 * for RM_LP_ESCAPED_MAX(n) bytes. Returns the length written. */
size_t rm_lp_escape(char *dst, const char *s, size_t n, enum rm_lp_kind k);

#endif
