#include "model/throttle.h"

#include <stdlib.h>
#include <string.h>

static const char *const reason_names[RM_THR_REASONS] = {"gpu_idle",
                                                         "applications_clocks_setting",
                                                         "sw_power_cap",
                                                         "hw_slowdown",
                                                         "sync_boost",
                                                         "sw_thermal_slowdown",
                                                         "hw_thermal_slowdown",
                                                         "hw_power_brake_slowdown",
                                                         "display_clock_setting"};

const char *rm_thr_name(int k)
{
    return k >= 0 && k < RM_THR_REASONS ? reason_names[k] : "?";
}

int rm_thr_column(const char *s, size_t len)
{
    static const char *const prefixes[] = {"clocks_event_reasons.", "clocks_throttle_reasons."};
    for (size_t i = 0; i < 2; i++) {
        size_t pl = strlen(prefixes[i]);
        if (len <= pl || memcmp(s, prefixes[i], pl)) continue;
        const char *r = s + pl;
        size_t rest = len - pl;
        if (rest == 6 && !memcmp(r, "active", 6)) return RM_THR_MASK_COLUMN;
        for (int k = 0; k < RM_THR_REASONS; k++)
            if (strlen(reason_names[k]) == rest && !memcmp(r, reason_names[k], rest)) return k;
        return -1;
    }
    return -1;
}

int rm_thr_flag(const char *s, size_t n)
{
    while (n && *s == ' ')
        s++, n--;
    if (n == 6 && !memcmp(s, "Active", 6)) return 1;
    if (n == 10 && !memcmp(s, "Not Active", 10)) return 0;
    return -1;
}

bool rm_thr_mask(const char *s, size_t len, unsigned *mask)
{
    *mask = 0;
    while (len && *s == ' ')
        s++, len--;
    if (len <= 2 || len >= 40) return false;
    char buf[40], *end;
    memcpy(buf, s, len);
    buf[len] = 0;
    unsigned long long v = strtoull(buf, &end, 16);
    if (end == buf || *end) return false;
    *mask = (unsigned)(v & ((1u << RM_THR_REASONS) - 1));
    return true;
}
