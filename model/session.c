#include "model/session.h"

#include <stdio.h>
#include <string.h>

const char *const rm_health_names[] = {"healthy", "degraded", "unavailable", "disabled"};

const char *rm_session_status_text(char *buf, size_t cap, const char *status, long long sig)
{
    if (!status) status = "";
    const char *name = sig > 0 && sig < 65 ? sigabbrev_np((int)sig) : NULL;
    if (sig <= 0)
        snprintf(buf, cap, "%s", status);
    else if (name)
        snprintf(buf, cap, "%s (SIG%s)", status, name);
    else
        snprintf(buf, cap, "%s (signal %lld)", status, sig);
    return buf;
}
