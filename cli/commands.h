/* The runmon subcommands. Each takes argv with argv[0] = the subcommand name and returns the
 * process exit status: 0 success, 1 a runtime failure, 2 a usage or input error (the
 * message is already printed), or the wrapped command's status where the command says so. */
#ifndef RUNMON_CLI_COMMANDS_H
#define RUNMON_CLI_COMMANDS_H

typedef int (*rm_command_fn)(int argc, char **argv);

struct rm_command {
    const char *name;
    rm_command_fn run;
    const char *summary;
};

#endif
