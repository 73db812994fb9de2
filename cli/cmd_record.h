#ifndef RUNMON_CMD_RECORD_H
#define RUNMON_CMD_RECORD_H
/* `runmon record`: see its --help and man/runmon.1. */
int rm_cmd_record(int argc, char **argv);
#endif
