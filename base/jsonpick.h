/* Some members of the JSON object in a file, read without building a tree of the rest: a
 * listing that needs four figures of a summary.json of thousands of phase rows pays a scan of
 * its bytes, in a fixed buffer, instead of a jansson tree of the whole document.
 */
#ifndef RUNMON_BASE_JSONPICK_H
#define RUNMON_BASE_JSONPICK_H

#include <jansson.h>
#include <stddef.h>

/* An object holding the top-level members of path's object named keys[0..n) (the last one of
 * a repeated name, as jansson keeps), each parsed by jansson; the others are skipped. NULL
 * when path cannot be read or is not one JSON object: the whole file is scanned, its strings,
 * escapes, brackets and separators checked (nested values are not checked beyond that, nor
 * UTF-8 in the members skipped). */
/* A key "NAME[].a,b,c" picks member NAME, an array of objects, keeping only the members a, b
 * and c of each (at most 32; an element that is not an object becomes null): a summary's
 * thousands of phase rows cost a scan, not a tree (NAME that is not an array is kept whole). */
json_t *rm_json_pick_file(const char *path, const char *const *keys, size_t n);

/* rm_json_pick_file, and: a key "*" keeps every member that no other key names; the
 * top-level member named rows (an array) is not kept: each of its elements is parsed on its
 * own and handed to each (which owns it) as the scan reaches it, so an array of thousands of
 * rows is never held (a report that draws a few figures of each phase row). A NULL result
 * after some rows were handed means the file was not one JSON object. */
json_t *rm_json_pick_file_rows(const char *path, const char *const *keys, size_t n,
                               const char *rows, void (*each)(void *ctx, json_t *row), void *ctx);

#endif
