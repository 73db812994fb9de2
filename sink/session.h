/* session.json in a session folder: the session's identity and state, written atomically. */
#ifndef RUNMON_SESSION_H
#define RUNMON_SESSION_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/session.h"

/* "20261121T101502Z-host-1234": sortable by time, unique per host and pid. */
void rm_session_make_id(char *out, size_t cap, int64_t epoch_ns, const char *host, pid_t pid);

/* The session.json document (format "runmon-session", schema_version 1). */
json_t *rm_session_to_json(const struct rm_session *s);

/* Atomically (re)writes <dir>/session.json. 0, or -1 with errno. */
int rm_session_save(const struct rm_session *s);

#endif
