// bloomshard: the one thin main. Dispatches to the subcommands.
#include "app/cli/cli.hpp"

int main(int argc, char** argv) { return bloomshard::app::run_cli(argc, argv); }
