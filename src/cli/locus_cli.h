/*
 * locus_cli.h — subcommands of the `locus` tool. Each takes the words after
 * its name (argv[0] is the subcommand) and returns the process exit status:
 * 0 on success, 2 for bad input (after one line on stderr), 1 for a failure.
 */
#ifndef LOCUS_CLI_H
#define LOCUS_CLI_H

int locus_cmd_topo(int argc, char **argv);
int locus_cmd_map(int argc, char **argv);
int locus_cmd_info(int argc, char **argv);
int locus_cmd_tune(int argc, char **argv);
int locus_cmd_bench(int argc, char **argv);

#endif
