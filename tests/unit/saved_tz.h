/* A unit test's TZ for a while: set_tz, then restore_tz (the zone the process had, or none).
 * Header-only: each test binary is one file. */
#ifndef RUNMON_TESTS_SAVED_TZ_H
#define RUNMON_TESTS_SAVED_TZ_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct saved_tz {
    int had;
    char value[128];
};

static inline struct saved_tz set_tz(const char *zone)
{
    struct saved_tz t = {0};
    const char *old = getenv("TZ");
    if (old) t.had = 1, snprintf(t.value, sizeof t.value, "%s", old);
    setenv("TZ", zone, 1);
    tzset();
    return t;
}

static inline void restore_tz(const struct saved_tz *t)
{
    if (t->had)
        setenv("TZ", t->value, 1);
    else
        unsetenv("TZ");
    tzset();
}

#endif
