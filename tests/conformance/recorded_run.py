"""Run a script with its network API use recorded, for tests that run the pipeline in a fresh process.

    python tests/conformance/recorded_run.py RECORDS_FILE SCRIPT [ARGS...]

runs SCRIPT as __main__ with the recorder installed (recorder.install) and pickles the records to
RECORDS_FILE, even when the script fails; `load_records` reads them back into a Recorder for `violations`.
"""

import pathlib
import pickle
import runpy
import sys


def main():
    records_file, script = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    install()
    with recording() as recorder:
        try:
            runpy.run_path(script, run_name="__main__")
        finally:
            with open(records_file, "wb") as file:
                pickle.dump(recorder.records, file)


def load_records(records_file):
    """The Recorder a recorded run wrote to `records_file`."""
    recorder = Recorder()
    with open(records_file, "rb") as file:
        recorder.records = pickle.load(file)
    return recorder


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/, for the conformance package
    from conformance.recorder import install, recording  # noqa: E402
    main()
else:
    from .recorder import Recorder
