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

void rm_session_init_collectors(struct rm_session *s, bool gpu, bool command, unsigned off)
{
    for (int i = 0; i < RM_STREAM_COUNT; i++) {
        unsigned needs = rm_stream_defs[i].needs;
        s->collectors[i].name = rm_stream_defs[i].name;
        if ((!gpu && (needs & RM_NEEDS_NVIDIA_SMI)) || (!command && (needs & RM_NEEDS_COMMAND)) ||
            (off & (1u << i)))
            s->collectors[i].health = RM_HEALTH_DISABLED;
    }
}
