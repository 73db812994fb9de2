#include "cli/version.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <csv.h>
#include <jansson.h>
#include <ncurses.h>
#include <pcre2.h>

#ifndef RUNMON_VERSION
#error "RUNMON_VERSION comes from the VERSION file; build with the Makefile"
#endif

/* Two-level stringification, so the library's numeric macros print as their values. */
#define RM_STR_(x) #x
#define RM_STR(x) RM_STR_(x)

const char *rm_version(void)
{
    return RUNMON_VERSION;
}

void rm_print_version(FILE *out)
{
    fprintf(out, "runmon %s\n", RUNMON_VERSION);
    /* Compile-time versions: what the headers said when this binary was built. */
    fprintf(out, "built with: jansson %s, pcre2 %s.%s, libcsv %s.%s.%s, ncurses %s\n",
            JANSSON_VERSION, RM_STR(PCRE2_MAJOR), RM_STR(PCRE2_MINOR), RM_STR(CSV_MAJOR),
            RM_STR(CSV_MINOR), RM_STR(CSV_RELEASE), NCURSES_VERSION);
}
