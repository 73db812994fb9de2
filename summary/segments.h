/* Listing a stream's files in a session folder: the one copy of that rule (model/streams.h
 * names the files). */
#ifndef RUNMON_SUMMARY_SEGMENTS_H
#define RUNMON_SUMMARY_SEGMENTS_H

#include <stddef.h>

/* The files of one stream in dir, in time order: sealed "<stem>-NNNNNN.csv" by name, then
 * the active "<stem>.csv" when present. *names gets malloc'd base names (free with
 * rm_segment_family_free). Returns how many; 0 (and *names NULL) when none or on error. */
size_t rm_segment_family(const char *dir, int stream, char ***names);
void rm_segment_family_free(char **names, size_t n);

#endif
