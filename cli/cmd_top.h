/* runmon top: a live terminal view of a recording session. */
#ifndef RUNMON_CLI_CMD_TOP_H
#define RUNMON_CLI_CMD_TOP_H

int rm_cmd_top(int argc, char **argv);

#endif
