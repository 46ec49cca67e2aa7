"""dbt started ahead of its warehouse: the tracker's own dbt process.

The tracker starts this while it lands the snapshot. It imports dbt and parses the project (the
seconds a dbt run spends before its first node), then waits for one line on stdin: ``go`` runs
the dbt command given after ``--`` with the parsed project; anything else, or the end of stdin
(the landing failed), ends it without running. Exit status as dbt's: 0 success, 1 a node failed,
2 dbt could not run (a project that does not parse: its errors were printed by the parse).

    python -m tracker.dbt_ahead PARSE_ARGS... -- COMMAND_ARGS...
"""

import gc
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from dbt.cli.main import dbtRunner

    split = argv.index("--")
    parsed = dbtRunner().invoke(["parse", *argv[:split]])
    if sys.stdin.readline().strip() != "go":
        return 0
    if not parsed.success:
        return 2
    command = argv[split + 1 :]
    done = dbtRunner(manifest=parsed.result).invoke(command)
    if done.result is not None and hasattr(done.result, "write"):
        # dbt runs with --no-write-json: its run results alone, not the manifest it would write
        # first (a third of a second after the last node, that nothing reads)
        target = Path(command[command.index("--target-path") + 1])
        done.result.write(str(target / "run_results.json"))
    return 0 if done.success else 2 if done.exception else 1


if __name__ == "__main__":
    status = main(sys.argv[1:])
    gc.freeze()  # the tracker reads dbt's output to its end: skip the collection at exit
    sys.exit(status)
