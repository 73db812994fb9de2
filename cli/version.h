/* runmon --version: the program's version (from the top-level VERSION file, passed by the
 * Makefile) and the versions of the libraries it was compiled against. */
#ifndef RUNMON_CLI_VERSION_H
#define RUNMON_CLI_VERSION_H

#include <stdio.h>

/* The version string, e.g. "0.2.0". */
const char *rm_version(void);

/* Prints "runmon VERSION" and one line naming the libraries' versions at build time. */
void rm_print_version(FILE *out);

#endif
