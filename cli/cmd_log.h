/* The RunLog subcommands of the runmon CLI: `runmon log` and `runmon phase`. */
#ifndef RUNMON_CMD_LOG_H
#define RUNMON_CMD_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

/* runmon log [--file PATH] phase NAME SECONDS [KEY=VALUE | KEY:=JSON ...]
 * runmon log [--file PATH] event TYPE [KEY=VALUE | KEY:=JSON ...]
 * Exit: 0 written, 2 bad input or the run log cannot be opened (nothing written), 1 the
 * write failed. */
int rm_cmd_log(int argc, char **argv);

/* runmon phase [--file PATH] NAME [KEY=VALUE | KEY:=JSON ...] -- COMMAND [ARG ...]
 * Exit: the command's status (128+N if killed by signal N, 127 not found, 126 not
 * runnable), or 2 for bad input / 1 if phase_enter could not be written (the command is
 * then not run). */
int rm_cmd_phase(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
