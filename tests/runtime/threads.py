"""Run one function in several threads at once and collect what they raised."""

import threading


def run_in_threads(work, count):
    """Call work(0) .. work(count - 1), each in its own thread, released together; return their exceptions."""
    errors, start = [], threading.Barrier(count)

    def guarded(index):
        try:
            start.wait()
            work(index)
        except Exception as error:  # noqa: BLE001  (the caller asserts there are none)
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
