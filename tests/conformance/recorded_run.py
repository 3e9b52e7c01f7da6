"""Run a script with its network API use recorded, for tests that run the pipeline in a fresh process.

    python tests/conformance/recorded_run.py RECORDS_FILE SCRIPT [ARGS...]

runs SCRIPT as __main__ with the recorder installed (recorder.install) and pickles the records to
RECORDS_FILE, even when the script fails; `load_records` reads them back into a Recorder for `violations`.
`run_recorded(code, *args, **run_options)` is the tests' `subprocess.run([python, "-c", code, *args])` with
that check added: it fails the test on a use TensorRT's bindings would not accept.
"""

import pathlib
import pickle
import runpy
import subprocess
import sys
import tempfile


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


def run_recorded(code, *args, **run_options):
    """subprocess.run of `code` with `args`, recorded; asserts its API use is TensorRT's, returns the result."""
    with tempfile.TemporaryDirectory() as folder:
        script, records = pathlib.Path(folder, "script.py"), pathlib.Path(folder, "records.pickle")
        script.write_text(code)
        result = subprocess.run([sys.executable, __file__, str(records), str(script), *args], **run_options)
        if records.exists():
            manifest = Manifest()
            found = violations(load_records(records), manifest)
            assert not found, report(found, manifest)
    return result


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/, for the conformance package
    from conformance.recorder import install, recording  # noqa: E402
    main()
else:
    from .manifest import Manifest
    from .recorder import Recorder, report, violations
