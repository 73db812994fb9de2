/* Value parsing shared by every reader of nvidia-smi and collector output.
 *
 * nvidia-smi spells "no value" many ways ([N/A], N/A, [Not Supported], [Unknown Error], ...,
 * an empty field, dmon's "-"); each is missing for that one field, never 0. Numbers may carry
 * a unit ("53 %", "123.00 W", "80257 MiB"). Numbers are read by base/decimal.h, locale-
 * independent and much cheaper than strtod, which matters at hundreds of MB/s.
 */
#ifndef RUNMON_SUMMARY_VALUES_H
#define RUNMON_SUMMARY_VALUES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/decimal.h" /* rm_parse_decimal: the numbers of the values below */

enum rm_value_rc {
    RM_VALUE_OK = 0,
    RM_VALUE_MISSING = 1, /* one of the "no value" spellings */
    RM_VALUE_BAD = -1,    /* neither a number nor a missing spelling */
};

/* True when s[0..len) (surrounding blanks ignored) is a missing-value spelling: empty, "-",
 * "N/A", or any text in square brackets ("[N/A]", "[Not Supported]", "[GPU is lost]", ...). */
bool rm_value_is_missing(const char *s, size_t len);

/* Parses a field value: blanks, a number, optional blanks and a unit made of letters, '%',
 * '/' (e.g. "%", "W", "MiB", "MHz", "MB/s", "C"). Returns an enum rm_value_rc. */
int rm_value_parse(const char *s, size_t len, double *out);

/* Length of a CSV header name without its unit suffix and trailing blanks:
 * "memory.used [MiB]" -> 11 ("memory.used"). */
size_t rm_header_name_len(const char *s, size_t len);

#endif
