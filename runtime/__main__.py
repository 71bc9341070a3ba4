import os
import sys

from runtime.commands import COMMANDS, METRICS_DIR_ENV, process_env, reset_metrics_dir

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python -m runtime {{{'|'.join(COMMANDS)}}}")
    name = sys.argv[1]
    env = process_env()
    if name == "migrate":
        # The release step runs before any other process starts: figures of the previous
        # release's processes are dropped here, never under a running process.
        reset_metrics_dir(env[METRICS_DIR_ENV])
    argv = COMMANDS[name](env)
    os.execve(argv[0], argv, env)
