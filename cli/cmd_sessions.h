/* `runmon sessions DIR`: the sessions of a sink directory. */
#ifndef RUNMON_CMD_SESSIONS_H
#define RUNMON_CMD_SESSIONS_H

int rm_cmd_sessions(int argc, char **argv);

#endif
