/* Writing one CSV field: RFC 4180 as docs/FORMATS.md states it for every CSV runmon writes
 * (a field is quoted only when it holds ',', '"', '\r' or '\n'; a '"' inside is doubled).
 * The one copy of that rule, for the collectors' streams (into a buffer) and the summary's
 * CSV output (onto a FILE).
 */
#ifndef RUNMON_BASE_CSVWRITE_H
#define RUNMON_BASE_CSVWRITE_H

#include <stddef.h>
#include <stdio.h>

/* Appends the field v[0..n) to out, quoted when it must be; returns the bytes written, or 0
 * when they would not fit in cap (nothing is written then). */
size_t rm_csv_put_field(char *out, size_t cap, const char *v, size_t n);

/* The same field written to out. 0, or EOF when a write failed. */
int rm_csv_fput_field(FILE *out, const char *v, size_t n);

/* A cell that a spreadsheet could take for a formula (OWASP "CSV injection"): it starts with
 * '=', '+', '-', '@', a tab or CR, and is not a plain decimal number (-1.5, +2, -3e-4: a
 * spreadsheet reads those as the numbers they are). */
int rm_csv_formula_like(const char *v, size_t n);

#endif
