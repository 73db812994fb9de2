#include "base/rm_time.h"

#include <errno.h>
#include <math.h>
#include <time.h>

#include "base/decimal.h"

int64_t rm_now_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * RM_NS_PER_SEC + ts.tv_nsec;
}

int64_t rm_now_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * RM_NS_PER_SEC + ts.tv_nsec;
}

/* Howard Hinnant's days_from_civil: exact for every proleptic Gregorian date. */
int64_t rm_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Inverse of rm_days_from_civil. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static char *put_digits(char *p, int64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + width;
}

size_t rm_format_ts(int64_t epoch_ns, char *buf)
{
    /* Floor division so times before 1970 still truncate towards the past like Python. */
    int64_t ms = epoch_ns / RM_NS_PER_MS - (epoch_ns % RM_NS_PER_MS < 0);
    int64_t secs = ms / 1000 - (ms % 1000 < 0);
    int64_t msec = ms - secs * 1000;
    int64_t days = secs / 86400 - (secs % 86400 < 0);
    int64_t sod = secs - days * 86400;
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    if (y < 0 || y > 9999) y = y < 0 ? 0 : 9999; /* clamp: the format has four year digits */
    char *p = buf;
    p = put_digits(p, y, 4);
    *p++ = '-';
    p = put_digits(p, mo, 2);
    *p++ = '-';
    p = put_digits(p, d, 2);
    *p++ = 'T';
    p = put_digits(p, sod / 3600, 2);
    *p++ = ':';
    p = put_digits(p, sod / 60 % 60, 2);
    *p++ = ':';
    p = put_digits(p, sod % 60, 2);
    *p++ = '.';
    p = put_digits(p, msec, 3);
    const char off[] = "+00:00";
    for (size_t i = 0; i < sizeof off - 1; i++)
        *p++ = off[i];
    *p = '\0';
    return (size_t)(p - buf);
}

static int take_digits(const char **p, const char *end, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (*p >= end || **p < '0' || **p > '9') return -1;
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    *out = v;
    return 0;
}

static int is_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int rm_parse_ts(const char *s, size_t len, int64_t *epoch_ns)
{
    const char *p = s, *end = s + len;
    int y, mo, d, h, mi, se;
    if (take_digits(&p, end, 4, &y) || p >= end || (*p != '-' && *p != '/')) return -1;
    char dsep = *p++;
    if (take_digits(&p, end, 2, &mo) || p >= end || *p++ != dsep) return -1;
    if (take_digits(&p, end, 2, &d) || p >= end || (*p != 'T' && *p != ' ')) return -1;
    p++;
    if (take_digits(&p, end, 2, &h) || p >= end || *p++ != ':') return -1;
    if (take_digits(&p, end, 2, &mi) || p >= end || *p++ != ':') return -1;
    if (take_digits(&p, end, 2, &se)) return -1;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 60) return -1;
    if (d > mdays[mo - 1] + (mo == 2 && is_leap(y))) return -1;
    int64_t frac_ns = 0;
    if (p < end && *p == '.') {
        p++;
        int64_t scale = RM_NS_PER_SEC / 10;
        int ndig = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            frac_ns += (*p - '0') * scale;
            scale /= 10;
            p++;
            ndig++;
        }
        if (ndig == 0) return -1;
    }
    int64_t offset_s = 0;
    if (p < end && (*p == 'Z' || *p == 'z')) {
        p++;
    } else if (p < end && (*p == '+' || *p == '-')) {
        int sign = *p++ == '-' ? -1 : 1, oh, om;
        if (take_digits(&p, end, 2, &oh)) return -1;
        if (p < end && *p == ':') p++;
        if (take_digits(&p, end, 2, &om) || oh > 23 || om > 59) return -1;
        offset_s = sign * (oh * 3600 + om * 60);
    }
    if (p != end) return -1;
    int64_t secs = rm_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 +
                   se - offset_s;
    *epoch_ns = secs * RM_NS_PER_SEC + frac_ns;
    return 0;
}

int rm_parse_ts_checked(const char *s, size_t len, int64_t *ns)
{
    if (len < 4) return -1;
    int y = 0;
    for (int i = 0; i < 4; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        y = y * 10 + (s[i] - '0');
    }
    if (y < 1970 || y > 2199) return -1;
    return rm_parse_ts(s, len, ns);
}

/* Seconds to subtract from a local wall-clock reading (as if it were UTC) to get UTC. */
static int64_t local_offset(int64_t naive_s, struct rm_tzcache *tz)
{
    int64_t key = naive_s / 1800; /* zones change offset on the half hour at the finest */
    if (tz && tz->key == key + 1) return tz->offset_s;
    time_t t = (time_t)naive_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    tm.tm_isdst = -1;
    time_t utc = mktime(&tm);
    int64_t off = utc == (time_t)-1 ? 0 : naive_s - (int64_t)utc;
    if (tz) {
        tz->key = key + 1; /* +1 so a zeroed cache never matches */
        tz->offset_s = off;
    }
    return off;
}

static bool has_offset(const char *s, size_t len)
{
    /* Past "YYYY-MM-DD": a 'Z' or a sign can only be an offset. */
    for (size_t i = 10; i < len; i++)
        if (s[i] == 'Z' || s[i] == 'z' || s[i] == '+' || s[i] == '-') return true;
    return false;
}

int rm_parse_time_field(const char *s, size_t len, bool local, struct rm_tzcache *tz, int64_t *ns)
{
    while (len && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        len--;
    if (len == 0) return -1;
    if (len >= 10 && (s[4] == '-' || s[4] == '/')) {
        int64_t v;
        if (rm_parse_ts_checked(s, len, &v)) return -1;
        if (local && !has_offset(s, len)) v -= local_offset(v / RM_NS_PER_SEC, tz) * RM_NS_PER_SEC;
        *ns = v;
        return 0;
    }
    double d;
    size_t n = rm_parse_decimal(s, len, &d);
    if (n != len || !(d > 1e8 && d < RM_MAX_EPOCH_S)) return -1;
    *ns = (int64_t)(d * 1e9 + (d >= 0 ? 0.5 : -0.5));
    return 0;
}

void rm_ts_cache_init(struct rm_ts_cache *c)
{
    memset(c, 0, sizeof *c);
    c->last_tod_ns = -1;
}

/* Nanoseconds since midnight of "YYYY?MM?DD?hh:mm:ss.fff" (s[11..23)), or -1 when that part is
 * not exactly so (the general parser then decides). */
static int64_t time_of_day_ns(const char *s, size_t len)
{
    if (len < 23 || s[13] != ':' || s[16] != ':' || s[19] != '.') return -1;
    static const unsigned char at[9] = {11, 12, 14, 15, 17, 18, 20, 21, 22};
    int d[9];
    for (int i = 0; i < 9; i++) {
        d[i] = s[at[i]] - '0';
        if (d[i] < 0 || d[i] > 9) return -1;
    }
    int h = d[0] * 10 + d[1], m = d[2] * 10 + d[3], sec = d[4] * 10 + d[5];
    if (h > 23 || m > 59 || sec > 59) return -1;
    return ((int64_t)(h * 60 + m) * 60 + sec) * RM_NS_PER_SEC +
           (int64_t)(d[6] * 100 + d[7] * 10 + d[8]) * 1000000;
}

int rm_ts_cache_parse_new(struct rm_ts_cache *c, const char *s, size_t len, bool local, int64_t *ns)
{
    /* The same day and zone as the last time parsed, only the time of day differs: the time
     * moves by exactly that; a local time without offset (nvidia-smi's) is then read in the
     * zone at its new time (local_offset's cache holds it within the half hour). */
    if (c->last_tod_ns >= 0 && local == c->last_local && len == c->last_len &&
        len < sizeof c->last && !memcmp(c->last, s, 11) &&
        !memcmp(c->last + 23, s + 23, len - 23)) {
        int64_t tod = time_of_day_ns(s, len);
        if (tod >= 0) {
            if (c->last_local) {
                int64_t naive = c->last_naive_ns - c->last_tod_ns + tod;
                c->last_naive_ns = naive;
                *ns = naive - local_offset(naive / RM_NS_PER_SEC, &c->tz) * RM_NS_PER_SEC;
            } else {
                *ns = c->last_ns - c->last_tod_ns + tod;
            }
            memcpy(c->last, s, len);
            c->last_ns = *ns;
            c->last_tod_ns = tod;
            return 0;
        }
    }
    if (rm_parse_time_field(s, len, local, &c->tz, ns)) return -1;
    if (len < sizeof c->last) {
        memcpy(c->last, s, len);
        c->last_len = len;
        c->last_ns = *ns;
        c->last_tod_ns = time_of_day_ns(s, len);
        /* A local reading: the shortcut needs its value before the zone's offset, which only
         * the general parser's own path gives for a text it read as a plain date-time. */
        c->last_local = local && len >= 10 && (s[4] == '-' || s[4] == '/') && !has_offset(s, len);
        if (c->last_local) {
            int64_t naive;
            if (rm_parse_ts_checked(s, len, &naive))
                c->last_tod_ns = -1;
            else
                c->last_naive_ns = naive;
        } else if (local) {
            c->last_tod_ns = -1; /* epoch seconds, or an offset: the general parser each time */
        }
    }
    return 0;
}

double rm_ns_to_seconds_ms(int64_t ns)
{
    return round((double)ns / (double)RM_NS_PER_MS) / 1000.0;
}

int rm_sleep_until_mono(int64_t deadline_ns, const atomic_int *stop)
{
    struct timespec ts = {.tv_sec = deadline_ns / RM_NS_PER_SEC,
                          .tv_nsec = deadline_ns % RM_NS_PER_SEC};
    for (;;) {
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        if (rc == 0) return 0;
        if (rc != EINTR) return 0;
        if (stop && atomic_load(stop)) return -1;
    }
}
