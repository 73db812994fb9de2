/* Reading a decimal number from text without locale or allocation, much cheaper than strtod
 * (which matters at hundreds of MB/s): the number parser of nvidia-smi's values
 * (model/values.h) and of epoch-second times (base/rm_time.h).
 */
#ifndef RUNMON_BASE_DECIMAL_H
#define RUNMON_BASE_DECIMAL_H

#include <stddef.h>

/* Parses a plain decimal number ([+-]digits[.digits][e[+-]digits]) at the start of s[0..len)
 * without locale or allocation. Returns the number of bytes consumed, 0 if there is no number.
 * Exact (correctly rounded) for up to 15 significant digits and small exponents. */
size_t rm_parse_decimal(const char *s, size_t len, double *out);

#endif
