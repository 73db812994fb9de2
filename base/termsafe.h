/* Text for a terminal: untrusted strings (a recorded command line, a host or GPU name, a
 * phase path, nvidia-smi's own words) made harmless before a human-readable output prints
 * them. JSON outputs keep the exact strings (JSON escapes control characters itself); CSV
 * keeps them exact when written to a file or a pipe, and goes through here on a terminal
 * (rm_csv_put); text meant for a terminal always goes through here.
 *
 * The rule, byte by byte: valid UTF-8 is kept as it is, except the control characters; "\n",
 * "\r" and "\t" become those two-character escapes; every other C0 control (0x00-0x1f), DEL
 * (0x7f), a C1 control written in UTF-8 (U+0080-U+009F, the bytes c2 80-c2 9f) and every
 * byte that is not part of valid UTF-8 (a stray continuation byte, an overlong form, a
 * surrogate, a code point past U+10FFFF, a cut sequence) becomes "\xNN", one per byte, in
 * lower-case hex. A backslash is kept, so the result is not reversible, but escaping twice
 * changes nothing: what comes out is printable.
 */
#ifndef RUNMON_BASE_TERMSAFE_H
#define RUNMON_BASE_TERMSAFE_H

#include <stddef.h>
#include <stdio.h>

/* Escapes the len bytes at s (NUL bytes included, as "\x00") into dst, which always ends up
 * NUL-terminated when cap > 0; the text is cut before an escape or a character that does
 * not fit whole. Returns the length of the whole escaped text (as snprintf does), so a
 * return >= cap means it was cut. */
size_t rm_term_escape_n(char *dst, size_t cap, const char *s, size_t len);

/* The same for a NUL-terminated string (NULL reads as ""). */
size_t rm_term_escape(char *dst, size_t cap, const char *s);

/* A table cell: s escaped, cut to at most maxcols characters (maxcols < 0: no cut; an
 * escape is never cut in the middle), then padded with spaces to width characters, left
 * aligned. A character is one UTF-8 code point or one escape character, so columns stay
 * aligned where "%-28.28s" would count bytes and could cut a UTF-8 character in two.
 * Returns dst. */
const char *rm_term_cell(char *dst, size_t cap, const char *s, int width, int maxcols);

/* Writes s escaped to out. Returns 0, or EOF on a write error. */
int rm_fput_safe(FILE *out, const char *s);

/* How rm_csv_put writes a field (flags; 0: its exact bytes). */
#define RM_CSV_TERM 1 /* escaped by the rule above: CSV written to a terminal */
#define RM_CSV_SAFE                                                                                \
    2 /* for a spreadsheet: a cell it could take for a formula (base/csvwrite.h,                   \
         rm_csv_formula_like) gets a leading ' (--csv-safe) */

/* One CSV field, RFC 4180: quoted when it holds a comma, a double quote, CR or LF, its double
 * quotes doubled. how: RM_CSV_TERM escapes s by the rule above first, for CSV written to a
 * terminal (then no control character is left, and the quoting is for commas and quotes
 * only); RM_CSV_SAFE guards a formula-like cell; 0 writes its exact bytes. NULL writes an
 * empty field. Returns 0, or EOF on a write error. */
int rm_csv_put(FILE *out, const char *s, int how);

#endif
