#include "model/session.h"

const char *const rm_health_names[] = {"healthy", "degraded", "unavailable", "disabled"};
