import os
import sys

from runtime.commands import COMMANDS

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python -m runtime {{{'|'.join(COMMANDS)}}}")
    argv = COMMANDS[sys.argv[1]]()
    os.execv(argv[0], argv)
