/* `runmon summary`. */
#ifndef RUNMON_CLI_CMD_SUMMARY_H
#define RUNMON_CLI_CMD_SUMMARY_H

int rm_cmd_summary(int argc, char **argv);

#endif
